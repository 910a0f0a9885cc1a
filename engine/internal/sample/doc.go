// Package sample holds small controllers written the way upstream projects
// write theirs (builder, For/Owns/Watches, predicates, field indexes), used
// by the engine's own tests. One of them carries a deliberate bug.
package sample
