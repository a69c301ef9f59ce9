//go:build linux

package main

import (
	"errors"
	"fmt"
)

// report prints the verdicts of the run and fails when a target was not
// met.
func report() error {
	if len(targets) == 0 {
		return nil
	}
	fmt.Println("\n== targets")
	failed := 0
	for _, t := range targets {
		fmt.Printf("   %-7s %s\n", verdict(t.ok), t.what)
		if !t.ok {
			failed++
		}
	}
	if failed > 0 {
		return errors.New(fmt.Sprint(failed, " of ", len(targets), " targets not met"))
	}
	return nil
}
