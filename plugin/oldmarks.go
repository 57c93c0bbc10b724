package main

//go:wasmexport fold-marks
func foldMarks() int32 { return call("fold-marks") }
