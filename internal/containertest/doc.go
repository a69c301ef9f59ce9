// Package containertest tests zonename, cgroupid and cgrouppath() (the
// container a process runs in, from its cgroup) with processes placed in
// cgroups the tests create, on this machine's kernel and in 6.1 and 6.12
// guests.
package containertest
