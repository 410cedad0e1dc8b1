package transport

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestExtTemplateWritesWhatExtWriterWrites: for random mixes of fixed pairs
// and slots (a slot first, last, next to another, none at all), in both
// layouts, Fill gives the bytes an ExtWriter writes for the same pairs.
func TestExtTemplateWritesWhatExtWriterWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	values := []string{"", "0", "false", "TopicTest", "KEYS\x01k1\x02UNIQ_KEY\x01AB\x02", `a"b\c`, "é\xff", "1733430000123"}
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		for round := range 2000 {
			tpl := NewExtTemplate(st)
			var fills []string
			w := NewExtWriter(st, 0)
			for i := range rng.IntN(6) {
				key := fmt.Sprintf("k%d", i)
				v := values[rng.IntN(len(values))]
				if rng.IntN(2) == 0 {
					tpl.Add(key, v)
				} else {
					tpl.Slot(key)
					fills = append(fills, v)
				}
				w.Add(key, v)
			}
			got, want := tpl.Fill(fills...), w.Ext()
			if got.Type != want.Type || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("%v round %d: Fill = %q, ExtWriter = %q", st, round, got.Data, want.Data)
			}
		}
	}
}

// TestExtTemplateDecodes: a filled send header decodes to its pairs in both layouts.
func TestExtTemplateDecodes(t *testing.T) {
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		tpl := NewExtTemplate(st)
		tpl.Add("batch", "false")
		tpl.Slot("bornTimestamp")
		tpl.Add("producerGroup", "G")
		tpl.Slot("properties")
		tpl.Add("topic", "T")
		props := "KEYS\x01k7\x02UNIQ_KEY\x01ABC\x02"
		var frame bytes.Buffer
		if err := EncodeFrame(&frame, &Command{Code: int16(SendMessage), Serialize: st, Ext: tpl.Fill("1733430000123", props), Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		cmd, err := DecodeFrame(&frame, DefaultMaxFrameSize)
		if err != nil {
			t.Fatalf("%v: %v", st, err)
		}
		want := map[string]string{"batch": "false", "bornTimestamp": "1733430000123", "producerGroup": "G", "properties": props, "topic": "T"}
		if fmt.Sprint(cmd.Fields()) != fmt.Sprint(want) {
			t.Errorf("%v: decoded %v, want %v", st, cmd.Fields(), want)
		}
	}
}

// TestExtTemplateFillCountsItsValues: a wrong number of values is refused.
func TestExtTemplateFillCountsItsValues(t *testing.T) {
	tpl := NewExtTemplate(SerializeJSON)
	tpl.Slot("a")
	defer func() {
		if recover() == nil {
			t.Error("Fill with no values for one slot did not panic")
		}
	}()
	tpl.Fill()
}
