package sqlbus

// Nudge wakes the subscriber's readers waiting out their PollInterval, to look for messages at
// once: what a publisher in the same process calls after committing messages, so they are read
// without waiting for the next poll. Messages published by other processes are found by the
// poll. It never blocks; after Close it is harmless.
func (s *Subscriber) Nudge() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
}

// woken returns the channel the next Nudge closes. A reader takes it before it looks for
// messages, so a nudge while it looks is not lost: its wait then ends at once.
func (s *Subscriber) woken() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}
