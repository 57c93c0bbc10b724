package main

// The report's exports (plugin/codec/report.go): audit lines in, the report's
// numbers out. The shim runs them on an instance of their own.

//go:wasmexport report-begin
func reportBegin() int32 { return call("report-begin") }

//go:wasmexport report-feed
func reportFeed() int32 { return call("report-feed") }

//go:wasmexport report-end
func reportEnd() int32 { return call("report-end") }
