//go:debug randseednop=0

package ctrlbugs

import (
	"testing"
	"time"

	"github.com/fluxcd/source-controller/ctrlbugs/s3stub"

	"github.com/ctrlbugs/corpus/engine/enginetest"
)

// bucketContents is the S3 bucket every fluxcd scenario reads.
var bucketContents = map[string][]byte{
	"manifests/deploy.yaml": []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podinfo\n"),
	"README.md":             []byte("# podinfo\n"),
}

// installS3 serves the scenarios' bucket in-process for the test.
func installS3(t *testing.T) *s3stub.Stub {
	s3 := s3stub.New("podinfo", nil)
	for k, v := range bucketContents {
		s3.PutAt(k, v, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	t.Cleanup(s3.Install())
	return s3
}

// TestFindings re-verifies every fluxcd finding (see enginetest.Findings for
// the modes: reproduce, verify, record, bump).
func TestFindings(t *testing.T) {
	installS3(t)
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Findings(t, p)
}
