package sandbox

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// personal adds personal data to synthetic transcripts, so a bridge redacting what it sends
// has something to find: every odd segment (ids 1, 3, 5, …) ends with a sentence holding one
// e-mail address, phone number, card number, IBAN or IP address, the kinds in turn from a
// seeded start, next to ordinary numbers that are none of them; every report ends with an
// e-mail address. All of it derives from the file's SHA-256 (its own stream: the rest of the
// transcript is what it was without it). The numbers are reserved for examples: phone numbers
// +1 201-555-01xx, IP addresses from 192.0.2.0/24 and 2001:db8::/32, e-mail addresses at
// example.com; card numbers start with 4 and pass the Luhn check; IBANs are German with valid
// check digits.
type personal struct {
	rng  *rand.Rand
	next int
}

// newPersonal returns the personal data of the file of digest for purpose ("transcript", or
// "report:<slug>").
func newPersonal(digest, purpose string) *personal {
	rng := rngFor(digest, "personal:"+purpose)
	return &personal{rng: rng, next: rng.IntN(5)}
}

// sentence returns the next sentence of personal data (with a leading space).
func (p *personal) sentence() string {
	k := p.next
	p.next = (p.next + 1) % 5
	switch k {
	case 0:
		return fmt.Sprintf(" You can reach me at %s, order number 1234567.", p.email())
	case 1:
		return fmt.Sprintf(" My number is +1 201-555-01%02d, and we are 12 people.", p.rng.IntN(100))
	case 2:
		return fmt.Sprintf(" The card is %s, expiring 2027.", p.card())
	case 3:
		return fmt.Sprintf(" Pay to %s by Friday.", p.iban())
	default:
		if p.rng.IntN(2) == 0 {
			return fmt.Sprintf(" The server at 192.0.2.%d went down at 10:30.", 1+p.rng.IntN(254))
		}
		return fmt.Sprintf(" The server at 2001:db8::%x went down at 10:30.", 1+p.rng.IntN(0xfffe))
	}
}

func (p *personal) email() string {
	return strings.ToLower(speakerNames[p.rng.IntN(len(speakerNames))]) + fmt.Sprintf(".%d@example.com", p.rng.IntN(100))
}

// card returns 16 digits starting with 4, the last one the Luhn check digit, in groups of four.
func (p *personal) card() string {
	d := make([]int, 16)
	d[0] = 4
	for i := 1; i < 15; i++ {
		d[i] = p.rng.IntN(10)
	}
	sum := 0
	for i := 14; i >= 0; i-- { // the check digit doubles the digit before it, and every second one
		n := d[i]
		if (14-i)%2 == 0 {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	d[15] = (10 - sum%10) % 10
	var b strings.Builder
	for i, n := range d {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(byte('0' + n))
	}
	return b.String()
}

// iban returns a German IBAN (18 digits of bank code and account) with its check digits, in
// groups of four.
func (p *personal) iban() string {
	var bban strings.Builder
	for range 18 {
		bban.WriteByte(byte('0' + p.rng.IntN(10)))
	}
	rem := 0
	for _, c := range bban.String() + "131400" { // D=13, E=14, check digits 00
		rem = (rem*10 + int(c-'0')) % 97
	}
	s := fmt.Sprintf("DE%02d%s", 98-rem, bban.String())
	var b strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:min(i+4, len(s))])
	}
	return b.String()
}
