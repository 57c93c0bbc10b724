package main

//go:wasmexport quota-menu
func quotaMenu() int32 { return call("quota-menu") }
