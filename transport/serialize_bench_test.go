package transport

import "testing"

// BenchmarkDecodeSendHeader decodes a send request's and a send answer's
// header in each encoding: what the broker and the bench client pay per send.
func BenchmarkDecodeSendHeader(b *testing.B) {
	req := map[string]string{"batch": "false", "bornTimestamp": "1700000000123", "defaultTopic": "TBW102",
		"defaultTopicQueueNums": "4", "flag": "0", "maxReconsumeTimes": "0", "producerGroup": "rocketraft_bench_producer",
		"properties": "KEYS\x01k123456\x02UNIQ_KEY\x017F0000010001000000000000000000000001\x02WAIT\x01true\x02",
		"queueId":    "3", "reconsumeTimes": "0", "sysFlag": "0", "topic": "BenchTopic", "unitMode": "false"}
	// SEND_MESSAGE_V2's header carries the same fields under one-letter keys
	// (SendMessageRequestHeaderV2), as the Java and Go clients send them.
	reqV2 := map[string]string{"a": "rocketraft_bench_producer", "b": "BenchTopic", "c": "TBW102", "d": "4", "e": "3",
		"f": "0", "g": "1700000000123", "h": "0", "i": req["properties"], "j": "0", "k": "false", "l": "0", "m": "false"}
	resp := map[string]string{"MSG_REGION": "DefaultRegion", "TRACE_ON": "true", "msgId": "7F00000100002A9F00000000001E8480",
		"queueId": "3", "queueOffset": "123456", "transactionId": "7F0000010001000000000000000000000001"}
	for _, c := range []struct {
		name string
		ext  map[string]string
	}{{"request", req}, {"requestV2", reqV2}, {"answer", resp}} {
		for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
			frame, err := AppendFrame(nil, &Command{Code: 10, Language: "GO", Version: 401, Opaque: 1, ExtFields: c.ext, Serialize: st})
			if err != nil {
				b.Fatal(err)
			}
			header := frame[framePrefixSize:]
			b.Run(c.name+"/"+st.String(), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := DecodeHeader(st, header); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
