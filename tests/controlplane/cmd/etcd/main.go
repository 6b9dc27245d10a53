// Command etcd is etcd's own server entry point (go.etcd.io/etcd/server/v3/etcdmain), built from
// the Go module proxy for the tests' control plane. The etcd repository's cmd lives in a module
// with replace directives, so `go install` cannot build it; this one-line main can.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
