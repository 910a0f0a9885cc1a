package apiserver

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ReadCRDs decodes every CustomResourceDefinition in a multi-document YAML
// stream; other documents are an error.
func ReadCRDs(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	r := utilyaml.NewYAMLReader(bufioReader(data))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("document %d: kind %q is not CustomResourceDefinition", i, crd.Kind)
		}
		out = append(out, crd)
	}
}

// InstallCRDFile installs every CRD in a YAML file.
func (s *Server) InstallCRDFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	crds, err := readCRDsMemo(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, crd := range crds {
		if err := s.InstallCRD(crd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// readCRDsMemo is ReadCRDs, parsed once per content in this process (every
// run of a scenario installs the same files); each call gets copies.
func readCRDsMemo(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := crdFiles.get(sha256.Sum256(data), func() ([]*apiextensionsv1.CustomResourceDefinition, error) { return ReadCRDs(data) })
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(crds))
	for i, crd := range crds {
		out[i] = crd.DeepCopy()
	}
	return out, nil
}

var crdFiles processMemo[[sha256.Size]byte, []*apiextensionsv1.CustomResourceDefinition]

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
