// Package codec maps the WIT contract's JSON onto package policy and back.
//
// It is the whole of the wasm module's logic outside policy: the wasm entry
// (package main beside it) only moves bytes through the Extism ABI, and the
// test host runs this same package natively to check that the wasm build
// answers byte for byte what native Go answers.
package codec
