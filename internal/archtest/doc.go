// Package archtest holds the tests of the module's shape: which package
// may import which (the floors of docs/ARCHITECTURE.md), and that the
// compiled program's description, the loader and the consumer stay free
// of the compiler. It has no code of its own.
package archtest
