package dtrace

import "golang.org/x/sys/unix"

// utsname is the raw struct utsname of this machine, for -G's DOF.
func utsname() []byte {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return nil
	}
	var b []byte
	for _, f := range [][65]byte{u.Sysname, u.Nodename, u.Release, u.Version, u.Machine, u.Domainname} {
		b = append(b, f[:]...)
	}
	return b
}
