package inspect

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Listen listens on 127.0.0.1:port (port 0: a free one). A port in use is
// an error that names it.
func Listen(port int) (net.Listener, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("PORT=%d: not a TCP port (0 or none: a free one)", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("PORT=%d: port %d on 127.0.0.1 is in use; choose another PORT=, or none for a free one", port, port)
		}
		return nil, fmt.Errorf("PORT=%d: %w", port, err)
	}
	return l, nil
}

// ParsePort reads PORT= ("" is 0: a free one).
func ParsePort(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("PORT=%s: not a TCP port (0 or none: a free one)", s)
	}
	return n, nil
}

// ParseStep reads STEP= for rec ("" is the last step).
func ParseStep(rec *Recording, s string) (int, error) {
	if s == "" {
		return rec.Steps(), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("STEP=%s: not a step number (%s has steps 0 to %d)", s, rec.ID, rec.Steps())
	}
	if err := rec.checkStep(n); err != nil {
		return 0, fmt.Errorf("STEP=%d: %w", n, err)
	}
	return n, nil
}

// WriteKubeconfig writes a kubeconfig whose current context is the server
// at url, named after id.
func WriteKubeconfig(path, url, id string) error {
	name := "ctrlbugs-" + id
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: url}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// Serve serves s on l until ctx ends, then closes the server (open
// watches end).
func Serve(ctx context.Context, l net.Listener, s *Server) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case <-ctx.Done():
		_ = hs.Close()
		<-done
		return nil
	case err := <-done:
		return err
	}
}

// Keys reads step changes from r, a line each: a step number, "n" or
// empty (next), "p" (previous); it reports each change on out.
func Keys(r io.Reader, out io.Writer, s *Server) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		s.mu.Lock()
		var n int
		var err error
		switch line {
		case "", "n", "+":
			n = s.step + 1
		case "p", "-":
			n = s.step - 1
		default:
			n, err = strconv.Atoi(line)
			if err != nil {
				err = fmt.Errorf("%q: type a step number, n (next) or p (previous)", line)
			}
		}
		if err == nil {
			err = s.setStep(n)
		}
		var si StepInfo
		if err == nil {
			si = s.info(n, true)
		}
		s.mu.Unlock()
		if err != nil {
			_, _ = fmt.Fprintln(out, err)
			continue
		}
		_, _ = fmt.Fprintln(out, DescribeStep(si))
	}
}

// DescribeStep is a one-line account of a step.
func DescribeStep(si StepInfo) string {
	d := fmt.Sprintf("step %d of %d (rev %d, t=%s)", si.Step, si.Steps, si.Rev, si.Time)
	if r := si.Record; r != nil {
		d += fmt.Sprintf(": %s %s -> %s", r.Controller, r.Request, r.Result)
		if r.Resumes != 0 {
			d += fmt.Sprintf(" (resumes #%d)", r.Resumes)
		}
	} else if si.Step == 0 {
		d += ": before the first step"
	}
	return d
}

// Info returns the step served now, described.
func (s *Server) Info() StepInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info(s.step, true)
}
