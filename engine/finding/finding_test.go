package finding_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
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
conditions: ["cache lag >= 2 s", "none of the fault kinds"]
primary: {label: reproduce, expect: fails}
control: {label: control, dropPerturbations: true, expect: holds}
---
body
`

func write(t *testing.T, root, name, content string) string {
	t.Helper()
	dir := filepath.Join(root, "findings", "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	cases := []struct {
		name, old, new string
		// wantField is the field the *Error names ("" for a valid file);
		// wantMsg a part of its message.
		wantField, wantMsg string
	}{
		{"valid", "", "", "", ""},
		{"valid: every variant", "primary: {label: reproduce, expect: fails}", "primary: {label: reproduce, variants: all, expect: fails}", "", ""},
		{"missing title", "title: t\n", "", "title", "required"},
		{"missing primary label", "primary: {label: reproduce, expect: fails}", "primary: {expect: fails}", "primary.label", "required"},
		{"missing control", "control: {label: control, dropPerturbations: true, expect: holds}\n", "", "control.label", "required"},
		{"unknown key", "class: k\n", "class: k\nbogus: 1\n", "bogus", "unknown key"},
		{"unknown key in a run", "expect: fails}", "expect: fails, variantz: all}", "primary.variantz", "unknown key"},
		{"duplicate key", "class: k\n", "class: k\nclass: j\n", "front matter", "already set"},
		{"wrong type", "controllers: [c]", "controllers: c", "controllers", "cannot hold a string"},
		{"yaml syntax", "controllers: [c]", "controllers: [c", "front matter", "yaml"},
		{"bad status", "status: reproduces", "status: maybe", "status", `"maybe" is not one of`},
		{"bad severity", "severity: low", "severity: huge", "severity", "is not one of"},
		{"bad expect", "expect: fails}", "expect: fail}", "primary.expect", "want holds or fails"},
		{"bad variants", "expect: fails}", "variants: every, expect: fails}", "primary.variants", `the only value is "all"`},
		{"same expectations", "expect: holds}", "expect: fails}", "control.expect", "must be the opposite"},
		{"refuted primary must hold", "status: reproduces", "status: refuted", "primary.expect", "refuted finding"},
		{"fixed-upstream needs fixedIn", "status: reproduces", "status: fixed-upstream", "fixedIn", "required"},
		{"by-design primary must hold", "status: reproduces", "status: by-design", "primary.expect", "by-design finding"},
		{"missing conditions", "conditions: [\"cache lag >= 2 s\", \"none of the fault kinds\"]\n", "", "conditions", "required"},
		{"empty conditions", "conditions: [\"cache lag >= 2 s\", \"none of the fault kinds\"]", "conditions: []", "conditions", "required"},
		{"null conditions", "conditions: [\"cache lag >= 2 s\", \"none of the fault kinds\"]", "conditions:", "conditions", "required"},
		{"blank condition", "\"none of the fault kinds\"]", "\" \"]", "conditions[1]", "empty condition"},
		{"conditions not a list", "conditions: [\"cache lag >= 2 s\", \"none of the fault kinds\"]", "conditions: lag", "conditions", "cannot hold a string"},
		{"id must match the file", "id: p-f1", "id: p-f2", "id", "does not match the file name"},
		{"project must match the directory", "project: p\n", "project: q\n", "project", "findings/p"},
		{"valid: also", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nalso: [{label: other, scenario: findings/p/p-f1.md, expect: holds}]\n", "", ""},
		{"also without a scenario", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nalso: [{label: other, expect: holds}]\n", "also[0].scenario", "required"},
		{"also with a missing scenario", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nalso: [{label: other, scenario: scenarios/p/nope.json, expect: holds}]\n", "also[0].scenario", "no such file"},
		{"also reusing a label", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nalso: [{label: control, scenario: findings/p/p-f1.md, expect: holds}]\n", "also[0].label", "another run"},
		{"valid: releases", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: v1.0.0, expect: holds, trace: findings/p/p-f1.v1.0.0.trace.jsonl}]\n", "", ""},
		{"release not a version", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: 1.0, expect: holds, trace: t}]\n", "releases[0].version", "not a module version"},
		{"release is the pin", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: v1, expect: holds, trace: t}]\n", "releases[0].version", "is the pin"},
		{"release listed twice", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: v1.0.0, expect: holds, trace: a}, {version: v1.0.0, expect: fails, trace: b}]\n", "releases[1].version", "listed twice"},
		{"release bad expect", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: v1.0.0, expect: maybe, trace: t}]\n", "releases[0].expect", "want holds or fails"},
		{"release without a trace", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: v1.0.0, expect: holds}]\n", "releases[0].trace", "required"},
		{"valid: a release's own control", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: v1.0.0, expect: fails, trace: t, control: {label: other, dropActions: [a], expect: holds}}]\n", "", ""},
		{"release control expecting the same", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: v1.0.0, expect: fails, trace: t, control: {label: other, expect: fails}}]\n", "releases[0].control.expect", "must be the opposite"},
		{"release control without a label", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: v1.0.0, expect: fails, trace: t, control: {expect: holds}}]\n", "releases[0].control.label", "required"},
		{"release control with a scenario", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nreleases: [{version: v1.0.0, expect: fails, trace: t, control: {label: other, scenario: x.json, expect: holds}}]\n", "releases[0].control.scenario", "finding's scenario"},
		{"also claiming variants", "control: {label: control, dropPerturbations: true, expect: holds}\n", "control: {label: control, dropPerturbations: true, expect: holds}\nalso: [{label: other, scenario: findings/p/p-f1.md, variants: all, expect: holds}]\n", "also[0].variants", "not for the runs of also"},
		{"scenario on the primary run", "primary: {label: reproduce, expect: fails}", "primary: {label: reproduce, scenario: x.json, expect: fails}", "primary.scenario", "only for the runs of also"},
		{"no front matter", "---\nid", "id", "front matter", "must start with"},
		{"unclosed front matter", "---\nbody", "body", "front matter", "no closing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			content := good
			if tc.old != "" || tc.new != "" {
				if !strings.Contains(good, tc.old) {
					t.Fatalf("the valid front matter has no %q to replace", tc.old)
				}
				content = strings.Replace(good, tc.old, tc.new, 1)
			}
			p := write(t, root, "p-f1.md", content)
			f, err := finding.Load(root, p)
			if tc.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				if f.Body != "body\n" || !f.Control.DropPerturbations || len(f.Conditions) != 2 {
					t.Fatalf("decoded %+v", f)
				}
				return
			}
			var fe *finding.Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want a *finding.Error", err, err)
			}
			if fe.File != "findings/p/p-f1.md" || fe.ID != "p-f1" || fe.Project != "p" || fe.Field != tc.wantField || !strings.Contains(fe.Msg, tc.wantMsg) {
				t.Fatalf("error %#v, want file findings/p/p-f1.md, id p-f1, project p, field %q, a message containing %q", fe, tc.wantField, tc.wantMsg)
			}
			if want := "findings/p/p-f1.md: " + tc.wantField + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q does not start with %q", err, want)
			}
		})
	}
}

// TestLoadAllKeepsTheValid: a broken finding is reported on its own (file
// and field) and the valid ones still load.
func TestLoadAllKeepsTheValid(t *testing.T) {
	root := t.TempDir()
	write(t, root, "p-f1.md", good)
	write(t, root, "p-f2.md", strings.NewReplacer("id: p-f1", "id: p-f2", "status: reproduces", "status: maybe").Replace(good))
	write(t, root, "p-f3.md", strings.NewReplacer("id: p-f1", "id: p-f3", "expect: holds}", "expect: hold}").Replace(good))
	write(t, root, "p-f4.md", strings.NewReplacer("id: p-f1", "id: p-f4", "conditions: [\"cache lag >= 2 s\", \"none of the fault kinds\"]\n", "").Replace(good))
	write(t, root, "notes.txt", "not a finding")
	fs, broken := finding.LoadAll(root)
	if len(fs) != 1 || fs[0].ID != "p-f1" {
		t.Fatalf("loaded %v, want p-f1 alone", fs)
	}
	var got []string
	for _, e := range broken {
		got = append(got, e.ID+" "+e.File+" "+e.Field)
	}
	want := []string{"p-f2 findings/p/p-f2.md status", "p-f3 findings/p/p-f3.md control.expect", "p-f4 findings/p/p-f4.md conditions"}
	if !slices.Equal(got, want) {
		t.Fatalf("broken %q, want %q", got, want)
	}
}

func TestLoadAllWithoutFindings(t *testing.T) {
	fs, broken := finding.LoadAll(t.TempDir())
	if len(fs) != 0 || len(broken) != 0 {
		t.Fatalf("got %v %v from an empty root", fs, broken)
	}
}

func TestIndex(t *testing.T) {
	root := t.TempDir()
	write(t, root, "p-f1.md", good)
	fs, broken := finding.LoadAll(root)
	if len(broken) != 0 {
		t.Fatal(broken)
	}
	idx := finding.Index(fs)
	for _, want := range []string{"## p", "| [p-f1](findings/p/p-f1.md) | t | k | staleness | low | reproduces | not reported | example.com/m@v1 |",
		"- **p-f1**:\n  - cache lag >= 2 s\n  - none of the fault kinds\n"} {
		if !strings.Contains(idx, want) {
			t.Errorf("index lacks %q:\n%s", want, idx)
		}
	}
	// A long title is cut at a word in the table, with an ellipsis.
	long := strings.Repeat("word ", 60)
	write(t, root, "p-f1.md", strings.Replace(good, "title: t", "title: "+long, 1))
	fs, _ = finding.LoadAll(root)
	idx = finding.Index(fs)
	if strings.Contains(idx, long) || !strings.Contains(idx, "| word word") || !strings.Contains(idx, "word… |") {
		t.Errorf("a 300-character title is not cut in the table:\n%s", idx)
	}
}
