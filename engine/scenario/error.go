package scenario

import "strings"

// Error is a problem with a scenario file. Every error of this package is
// an *Error, or an ErrorList of them.
type Error struct {
	// File is the scenario file.
	File string
	// Field is the JSON path of the offending field, such as
	// "perturbations[0].until.time"; "" for the file as a whole.
	Field string
	// Msg says what is wrong.
	Msg string
}

// Error renders "file: field: msg".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is several errors in one scenario, in the order found.
// errors.As with an *Error target finds the first.
type ErrorList []*Error

// Error renders one error a line.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Err returns nil, the one error, or the list.
func (l ErrorList) Err() error {
	switch len(l) {
	case 0:
		return nil
	case 1:
		return l[0]
	default:
		return l
	}
}

// collector gathers errors for one file.
type collector struct {
	file string
	list ErrorList
}

func (c *collector) add(field, msg string) {
	c.list = append(c.list, &Error{File: c.file, Field: field, Msg: msg})
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
