module github.com/dsh-resilience/dsh-resilience

go 1.26

require (
	github.com/extism/go-pdk v1.1.3
	github.com/tidwall/gjson v1.20.3
)

require (
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
)
