//go:build !linux

package agent

import "errors"

func dialVsock(string) (stream, error) { return nil, errors.New("vsock needs Linux") }
