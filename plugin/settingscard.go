package main

//go:wasmexport settings-card
func settingsCard() int32 { return call("settings-card") }
