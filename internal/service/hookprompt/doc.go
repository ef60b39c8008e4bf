// Package hookprompt turns a webhook's JSON body into the prompt a trigger
// sends to Claude: a Go text/template written by the operator
// ([[triggers]] prompt), executed over the body a sender posted.
//
// The body is the sender's and may be anything, so a template never fails
// on what the body holds: a key that is missing, null, or not an object
// where the template expects one renders as nothing; so does an index out
// of range; a range over what is not a list ranges over nothing; a
// comparison of a number with an object is false. To get that, Parse
// rewrites the template's tree after parsing: every field chain (.a.b,
// $x.a, (pipe).a) becomes a call of a lenient lookup, every printing
// action ends in a function that prints nothing for a missing value, and
// every range's pipeline in one that passes on only lists, objects and
// counts; and the builtins that fail on unexpected values (index, slice,
// len, eq, ne, lt, le, gt, ge) are replaced by lenient ones.
// text/template's own missingkey=zero does not do it: on a map[string]any
// a missing key prints "<no value>", and a field of a missing or null
// object is an execution error.
//
// Templates get a small set of functions besides those builtins: default,
// truncate, json, lower, upper and trim (see Funcs).
// Execution is bounded: the output is cut at a size, and a panic inside is
// returned as an error.
//
// Templates are executed by DataDog's copy of text/template
// (github.com/DataDog/datadog-agent/pkg/template/text): the standard
// package's code and language, minus calling a method of the data. The
// lenient lookup above never reaches a method anyway (the body is decoded
// JSON), and the standard package's dynamic method lookup makes the linker
// keep every exported method in the binary: 3.8 MB of binary and 1.7 MB
// of peak RSS (BENCHMARKS.md). cmd/untether's TestLinkerDropsUnusedMethods
// keeps it so.
//
// It is a package of its own so that config can check a trigger's prompt
// when the file is loaded, with the very parser the webhook handler uses.
package hookprompt
