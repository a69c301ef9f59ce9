package output

import "strings"

// ContainerID is the container runtime's id in a cgroup's name, "" when
// it holds none: the hexadecimal id of docker-<id>.scope,
// cri-containerd-<id>.scope, crio-<id>.scope, libpod-<id>.scope (and
// of the bare <id> that runtimes name cgroups v1 with).
func ContainerID(name string) string {
	id := strings.TrimSuffix(name, ".scope")
	for _, p := range []string{"docker-", "cri-containerd-", "crio-", "libpod-"} {
		id = strings.TrimPrefix(id, p)
	}
	if len(id) < 12 || len(id) > 64 {
		return ""
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	return id
}
