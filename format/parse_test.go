package format

import (
	"errors"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in, msg string
	}{
		{"%3$d", "format conversion #1 uses unsupported positional format (%n$)"},
		{"%3", "format conversion #1 name expected before end of format string"},
		{"%Z", "format conversion #1 is undefined: %Z"},
		{"%d %zd", "format conversion #2 is undefined: %z"},
		{"%**d", "format conversion #1 has more than one '*' specified for the output width"},
		{"%.*.*d", "format conversion #1 has more than one '.' specified"},
		{"%5%", "format conversion #1 cannot be combined with other format flags: %%"},
		{"%", "format conversion #1 name expected before end of format string"},
		// actions/printf/err.D_SYNTAX.*.r
		{"%*1$d", "format conversion #1 uses unsupported positional format (%n$)"},
		{"%.*1$d", "format conversion #1 uses unsupported positional format (%n$)"},
		{"%.**d", "format conversion #1 has more than one '*' specified for the output precision"},
		{"%-%", "format conversion #1 cannot be combined with other format flags: %%"},
		{"%*", "format conversion #1 name expected before end of format string"},
		{"%.*", "format conversion #1 name expected before end of format string"},
		{"%z", "format conversion #1 is undefined: %z"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q) = %v, want *Error", tt.in, err)
			continue
		}
		if e.Tag != "D_SYNTAX" || e.Msg != tt.msg {
			t.Errorf("Parse(%q) = [%s] %q, want [D_SYNTAX] %q", tt.in, e.Tag, e.Msg, tt.msg)
		}
	}
}

func TestParseConvs(t *testing.T) {
	tests := []struct {
		in    string
		convs []string // Conv.String() of each conversion, "" for text only
		nargs int
	}{
		{"hello\n", []string{""}, 0},
		{"", []string{""}, 0},
		{"%d", []string{"%d"}, 1},
		{"%-*d<--\n", []string{"%-*d", ""}, 2},
		{"%%a = %a\n", []string{"%%", "%a", ""}, 1},
		{"%08.3lld", []string{"%08.3lld"}, 1},
		{"%-08x", []string{"%08x"}, 1}, // '0' after '-' cancels it
		{"%0-8x", []string{"%-8x"}, 1},
		{"%?p", []string{"%16p"}, 1},
		{"%@d %*.*s", []string{"%@d", "%*.*s"}, 3},
		{"%hhd", []string{"%hhd"}, 1},
	}
	for _, tt := range tests {
		f, err := Parse(tt.in)
		if err != nil {
			if tt.in == "%hhd" {
				continue // dtrace has no %hhd: undefined is right
			}
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if tt.in == "%hhd" {
			t.Errorf("Parse(%%hhd) succeeded; dtrace rejects it")
			continue
		}
		var got []string
		for i := range f.Convs {
			got = append(got, f.Convs[i].String())
		}
		if len(got) != len(tt.convs) {
			t.Errorf("Parse(%q) convs = %q, want %q", tt.in, got, tt.convs)
			continue
		}
		for i := range got {
			if got[i] != tt.convs[i] {
				t.Errorf("Parse(%q) conv %d = %q, want %q", tt.in, i, got[i], tt.convs[i])
			}
		}
		if n := f.NumArgs(); n != tt.nargs {
			t.Errorf("Parse(%q).NumArgs() = %d, want %d", tt.in, n, tt.nargs)
		}
	}
}

var (
	tInt    = ArgType{Kind: ArgInt, Name: "int", Size: 4, Signed: true, Base: "int"}
	tString = ArgType{Kind: ArgString, Name: "string", Size: 256}
	tAgg    = ArgType{Kind: ArgOther, Name: "aggregation"}
	tVoid   = ArgType{Kind: ArgOther, Name: "void"}
	tStack  = ArgType{Kind: ArgStack, Name: "stack", Size: 8}
	tShort  = ArgType{Kind: ArgInt, Name: "short", Size: 2, Signed: true, Base: "short"}
	tU64    = ArgType{Kind: ArgInt, Name: "uint64_t", Size: 8, Base: "unsigned long", Typedefs: []string{"uint64_t"}}
	tPtr    = ArgType{Kind: ArgPointer, Name: "void *", Size: 8}
)

// The messages below are the corpus's expected compiler errors
// (test/unittest/printf/err.*.r, printa/err.D_PRINTF_ARG_TYPE.*.r).
func TestValidate(t *testing.T) {
	printf := ValidateOptions{Func: "printf", ArgOffset: 1, ExactLen: true}
	printa := ValidateOptions{Func: "printa", ArgOffset: 1, Aggregation: true}
	tests := []struct {
		format string
		args   []ArgType
		opts   ValidateOptions
		tag    string
		msg    string
	}{
		{"hello %@d", []ArgType{tInt}, printf, "D_PRINTF_AGG_CONV",
			"%@ conversion requires an aggregation and is not for use with printf( )"},
		{"x = %d y = %d\n", []ArgType{tInt, tInt, tInt}, printf, "D_PRINTF_ARG_EXTRA",
			"printf( ) prototype mismatch: only 2 arguments required by this format string"},
		{"%?d\n", []ArgType{tInt, tInt}, printf, "D_PRINTF_ARG_EXTRA",
			"printf( ) prototype mismatch: only 1 arguments required by this format string"},
		{"%s", nil, printf, "D_PRINTF_ARG_PROTO",
			"printf( ) prototype mismatch: conversion #1 (%s) is missing a corresponding value argument"},
		{"hello %d %d", []ArgType{tInt, tAgg}, printf, "D_PRINTF_ARG_TYPE",
			"printf( ) argument #3 is incompatible with conversion #2 prototype:\n\tconversion: %d\n\t prototype: char, short, int, long, or long long\n\t  argument: aggregation"},
		{"%s\n", []ArgType{tVoid}, printf, "D_PRINTF_ARG_TYPE",
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %s\n\t prototype: char [] or string (or use stringof)\n\t  argument: void"},
		{"%s %.*d\n", []ArgType{tString}, printf, "D_PRINTF_DYN_PROTO",
			"printf( ) prototype mismatch: conversion #2 (%d) is missing a corresponding \".*\" argument"},
		{"%s %*d\n", []ArgType{tString}, printf, "D_PRINTF_DYN_PROTO",
			"printf( ) prototype mismatch: conversion #2 (%d) is missing a corresponding \"*\" argument"},
		{"%.*d\n", []ArgType{tString, tInt}, printf, "D_PRINTF_DYN_TYPE",
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: % .* d\n\t prototype: int\n\t  argument: string"},
		{"%*d\n", []ArgType{tString, tInt}, printf, "D_PRINTF_DYN_TYPE",
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: % * d\n\t prototype: int\n\t  argument: string"},
		{"%p", []ArgType{tStack}, printa, "D_PRINTF_ARG_TYPE",
			"printa( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %p\n\t prototype: pointer or integer\n\t  argument: stack"},
		{"", nil, printf, "D_PRINTF_FMT_EMPTY", "printf( ) format string is empty"},
		// actions/printf/err.*.r
		{"%.*d", []ArgType{tInt}, printf, "D_PRINTF_ARG_PROTO",
			"printf( ) prototype mismatch: conversion #1 (%d) is missing a corresponding value argument"},
		{"%d %d %d %d %d", []ArgType{tInt, tInt, tInt}, printf, "D_PRINTF_ARG_PROTO",
			"printf( ) prototype mismatch: conversion #4 (%d) is missing a corresponding value argument"},
		{"%*.*d", []ArgType{tInt, tInt, tString}, printf, "D_PRINTF_ARG_TYPE",
			"printf( ) argument #4 is incompatible with conversion #1 prototype:\n\tconversion: %d\n\t prototype: char, short, int, long, or long long\n\t  argument: string"},
		{"%*.*d", []ArgType{tInt}, printf, "D_PRINTF_DYN_PROTO",
			"printf( ) prototype mismatch: conversion #1 (%d) is missing a corresponding \".*\" argument"},
		{"%*.*d", nil, printf, "D_PRINTF_DYN_PROTO",
			"printf( ) prototype mismatch: conversion #1 (%d) is missing a corresponding \"*\" argument"},
		{"%*.*d", []ArgType{tString, tString, tInt}, printf, "D_PRINTF_DYN_TYPE",
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: % * d\n\t prototype: int\n\t  argument: string"},
		{"%hd", []ArgType{tInt}, printf, "D_PRINTF_ARG_TYPE",
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %hd\n\t prototype: short\n\t  argument: int"},
		{"%Y", []ArgType{tInt}, printf, "D_PRINTF_ARG_TYPE",
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %Y\n\t prototype: int64_t\n\t  argument: int"},
		// Accepted combinations.
		{"%d %s %hx %llx %p %k\n", []ArgType{tInt, tString, tShort, tU64, tPtr, tStack}, printf, "", ""},
		{"%s %@d %d\n", []ArgType{tString, tInt}, printa, "", ""},
		{"%@d\n", []ArgType{tString, tInt}, printa, "", ""}, // printa may skip keys
		{"%c %5.2s %%\n", []ArgType{tShort, tString}, printf, "", ""},
	}
	for _, tt := range tests {
		f, err := Parse(tt.format)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.format, err)
		}
		err = f.Validate(tt.args, tt.opts)
		if tt.tag == "" {
			if err != nil {
				t.Errorf("Validate(%q) = %v, want nil", tt.format, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Validate(%q) = %v, want [%s]", tt.format, err, tt.tag)
			continue
		}
		if e.Tag != tt.tag || e.Msg != tt.msg {
			t.Errorf("Validate(%q) =\n[%s] %s\nwant\n[%s] %s", tt.format, e.Tag, e.Msg, tt.tag, tt.msg)
		}
	}
}
