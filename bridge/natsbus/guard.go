package natsbus

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmnats "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/nats"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// gate lets the consumer's messages into watermill-nats' handler until the subscription shuts
// it, up to bus.max_in_flight of them at once, each handled on a goroutine of its own; shut
// waits for the handlers in progress and for a callback waiting for a slot. It also holds the
// consumer's pull, so that the subscription can stop pulling before it gives messages back.
type gate struct {
	mu     sync.RWMutex // read-held for each message from its callback to its handler's end
	closed bool
	slots  chan struct{} // one per handler in progress

	ccMu    sync.Mutex
	cc      jetstream.ConsumeContext
	stopped bool
}

type gateKey struct{}

func newGate(inFlight int) *gate { return &gate{slots: make(chan struct{}, max(1, inFlight))} }

func (g *gate) enter() bool {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return false
	}
	return true
}

func (g *gate) leave() { g.mu.RUnlock() }

func (g *gate) shut() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// pulling records the consumer's pull, stopping it at once if stopPulling came first.
func (g *gate) pulling(cc jetstream.ConsumeContext) {
	g.ccMu.Lock()
	defer g.ccMu.Unlock()
	g.cc = cc
	if g.stopped {
		cc.Stop()
	}
}

// stopPulling ends the consumer's pull, so that a message given back afterwards goes to
// another reader: given back before, the server could send it straight back here, to a
// subscription on its way out (NATS 2.9 then holds it until bus.ack_wait, and was seen to
// deliver it twice after that). A message already on its way here still waits for
// bus.ack_wait.
func (g *gate) stopPulling() {
	g.ccMu.Lock()
	defer g.ccMu.Unlock()
	g.stopped = true
	if g.cc != nil {
		g.cc.Stop()
	}
}

// guarded wraps the consumer that watermill-nats reads so that each message passes the gate,
// goes to watermill-nats' handler on a goroutine of its own (the client calls back one message
// at a time, and the handler waits for the message's ack: a pull would otherwise hand out one
// message at a time), and is settled with the server by the time that goroutine ends (see
// settle). The callback waits while bus.max_in_flight messages are in handlers: with 1, a
// message is handed out only once the one before is settled.
type guarded struct {
	jetstream.Consumer
	s    *Subscriber
	gate *gate
}

// Consume implements jetstream.Consumer.
func (g guarded) Consume(handler jetstream.MessageHandler, opts ...jetstream.PullConsumeOpt) (jetstream.ConsumeContext, error) {
	cc, err := g.Consumer.Consume(func(msg jetstream.Msg) {
		if !g.gate.enter() {
			// The subscription is ending: the group's next reader takes the message now.
			_ = msg.Nak()
			return
		}
		g.gate.slots <- struct{}{}
		go func() {
			defer g.gate.leave()
			defer func() { <-g.gate.slots }()
			g.s.settle(handler, msg)
		}()
	}, opts...)
	if err == nil {
		g.gate.pulling(cc)
	}
	return cc, err
}

// settle runs watermill-nats' handler for one message, then makes sure that the server hears
// what became of it: a message whose handler acked is acked even if watermill-nats' own ack
// failed, and one that no handler answered within bus.ack_wait is nacked at once, so that the
// group's next reader takes it now rather than after bus.ack_wait again (with
// bus.max_in_flight 1 the whole group would wait that long; with more, that message's job).
func (s *Subscriber) settle(handler jetstream.MessageHandler, raw jetstream.Msg) {
	m := &tracked{Msg: raw}
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("natsbus: recovered in the message handler", fmt.Errorf("%v", r), watermill.LogFields{"subject": raw.Subject()})
		}
		if m.settled {
			return
		}
		var err error
		switch {
		case m.wm != nil && isClosed(m.wm.Acked()):
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err = raw.DoubleAck(ctx)
			cancel()
		case m.wm != nil && isClosed(m.wm.Nacked()) && s.cfg.NakDelay > 0:
			err = raw.NakWithDelay(s.cfg.NakDelay)
		default:
			err = raw.Nak()
		}
		if err != nil {
			s.logger.Error("natsbus: settle a message (the server delivers it again after bus.ack_wait)", err,
				watermill.LogFields{"subject": raw.Subject()})
		}
	}()
	handler(m)
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// tracked is a JetStream message that remembers whether it was settled with the server, and
// the Watermill message made of it. Only the message's handler goroutine touches it.
type tracked struct {
	jetstream.Msg
	wm      *message.Message
	settled bool
}

// DoubleAck implements jetstream.Msg.
func (m *tracked) DoubleAck(ctx context.Context) error { return m.did(m.Msg.DoubleAck(ctx)) }

// Ack implements jetstream.Msg.
func (m *tracked) Ack() error { return m.did(m.Msg.Ack()) }

// Nak implements jetstream.Msg.
func (m *tracked) Nak() error { return m.did(m.Msg.Nak()) }

// NakWithDelay implements jetstream.Msg.
func (m *tracked) NakWithDelay(d time.Duration) error { return m.did(m.Msg.NakWithDelay(d)) }

// Term implements jetstream.Msg.
func (m *tracked) Term() error { return m.did(m.Msg.Term()) }

// TermWithReason implements jetstream.Msg.
func (m *tracked) TermWithReason(reason string) error { return m.did(m.Msg.TermWithReason(reason)) }

func (m *tracked) did(err error) error {
	m.settled = err == nil
	return err
}

// unmarshaler turns a JetStream message into a Watermill one like watermill-nats' own, except
// that it never fails (a header given several values keeps its last: watermill-nats v2.1.3
// dereferences the nil message its unmarshaler returns with an error), and it lets settle see
// the Watermill message.
type unmarshaler struct{}

// reserved headers are the publisher's and the server's, not the message's metadata.
var reserved = map[string]bool{
	wmnats.WatermillUUIDHdr: true, nats.MsgIdHdr: true, nats.ExpectedLastMsgIdHdr: true,
	nats.ExpectedStreamHdr: true, nats.ExpectedLastSubjSeqHdr: true, nats.ExpectedLastSeqHdr: true,
}

// Unmarshal implements watermill-nats' jetstream.Unmarshaler.
func (unmarshaler) Unmarshal(msg jetstream.Msg) (*message.Message, error) {
	hdr := msg.Headers()
	wm := message.NewMessage(hdr.Get(wmnats.WatermillUUIDHdr), msg.Data())
	for k, v := range hdr {
		if !reserved[k] && len(v) > 0 {
			wm.Metadata.Set(k, v[len(v)-1])
		}
	}
	if t, ok := msg.(*tracked); ok {
		t.wm = wm
	}
	return wm, nil
}
