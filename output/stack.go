package output

// Pop removes and returns the last element of *s. Renderers keep the
// records Begin opened on a stack (printing one record's actions may
// open another inside it) and pop one in End; ok is false when the
// stack is empty, an End without its Begin.
func Pop[T any](s *[]T) (top T, ok bool) {
	n := len(*s)
	if n == 0 {
		return top, false
	}
	top = (*s)[n-1]
	*s = (*s)[:n-1]
	return top, true
}
