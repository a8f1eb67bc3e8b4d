// Package archtest keeps the floors of the house (design.md, "The parts and the way data
// flows"): its test fails when a package imports one it must not. It has no code of its own.
package archtest
