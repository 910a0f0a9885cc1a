// Package finding reads the corpus's finding write-ups: Markdown files whose
// YAML front matter says what was found, on which pinned upstream, by which
// scenario, with which oracle, and which two runs give that oracle opposite
// answers. It also renders BUG-FINDINGS.md from them, and holds the one
// line a finding's check prints about it (Verdict), which the Makefile and
// the tools read back.
package finding
