package finding_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine/finding"
)

const good = `---
id: p-f1
title: t
project: p
upstream: example.com/m@v1
controllers: [c]
class: k
perturbations: [staleness]
severity: low
scenario: scenarios/p/p-f1.json
trace: findings/p/p-f1.trace.jsonl
oracle: o
status: reproduces
verified: "2026-11-22"
upstreamReport: not reported
primary: {label: reproduce, expect: fails}
control: {label: control, dropPerturbations: true, expect: holds}
---
body
`

func write(t *testing.T, root, content string) string {
	t.Helper()
	dir := filepath.Join(root, "findings", "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "p-f1.md")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	cases := []struct {
		name, old, new, wantErr string
	}{
		{"valid", "", "", ""},
		{"missing title", "title: t\n", "", "title: required"},
		{"unknown field", "class: k\n", "class: k\nbogus: 1\n", "unknown field"},
		{"bad status", "status: reproduces", "status: maybe", "status:"},
		{"bad severity", "severity: low", "severity: huge", "severity:"},
		{"same expectations", "expect: holds}", "expect: fails}", "control.expect: must be the opposite"},
		{"refuted primary must hold", "status: reproduces", "status: refuted", "primary.expect"},
		{"fixed-upstream needs fixedIn", "status: reproduces", "status: fixed-upstream", "fixedIn: required"},
		{"id must match the file", "id: p-f1", "id: p-f2", "does not match the file name"},
		{"no front matter", "---\nid", "id", "must start with"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			content := good
			if tc.old != "" || tc.new != "" {
				content = strings.Replace(good, tc.old, tc.new, 1)
			}
			p := write(t, root, content)
			f, err := finding.Load(root, p)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if f.Body != "body\n" || !f.Control.DropPerturbations {
					t.Fatalf("decoded %+v", f)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "p-f1.md") {
				t.Fatalf("error %v, want one naming the file and containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestIndex(t *testing.T) {
	root := t.TempDir()
	write(t, root, good)
	fs, err := finding.LoadAll(root)
	if err != nil {
		t.Fatal(err)
	}
	idx := finding.Index(fs)
	for _, want := range []string{"## p", "| [p-f1](findings/p/p-f1.md) | t | k | staleness | low | reproduces | not reported | example.com/m@v1 |"} {
		if !strings.Contains(idx, want) {
			t.Errorf("index lacks %q:\n%s", want, idx)
		}
	}
}
