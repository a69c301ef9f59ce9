//go:build linux

package pid

// SetMulti forces the choice between uprobe_multi links and perf events,
// so that tests cover both; it returns the previous choice.
func SetMulti(on bool) bool {
	Multi()
	old := multiOK
	multiOK = on
	return old
}
