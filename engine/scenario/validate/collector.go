package validate

import "github.com/ctrlbugs/corpus/engine/scenario"

// collector gathers one scenario file's problems, each a *scenario.Error
// naming the file and the field's JSON path.
type collector struct {
	file string
	list scenario.ErrorList
}

func (c *collector) add(field, msg string) {
	c.list = append(c.list, &scenario.Error{File: c.file, Field: field, Msg: msg})
}

// join is the JSON path of field name under parent.
func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
