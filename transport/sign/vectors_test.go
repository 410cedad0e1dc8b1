package sign

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The vectors of docs security-reference §7 (computed with HMAC-SHA1 and
// cross-checked there with a second implementation). AK=RocketMQ, SK=12345678.
const (
	testAK = "RocketMQ"
	testSK = "12345678"
)

// withAK returns the fields plus AccessKey.
func withAK(fields map[string]string) map[string]string {
	ext := map[string]string{"AccessKey": testAK}
	maps.Copy(ext, fields)
	return ext
}

// withSig returns a copy of ext carrying Signature.
func withSig(ext map[string]string, sig string) map[string]string {
	out := maps.Clone(ext)
	out["Signature"] = sig
	return out
}

var (
	tv3Body = []byte(`{"clientID":"127.0.0.1@1","consumerDataSet":[],"producerDataSet":[{"groupName":"PG_demo"}]}`)
	tv4Body = mustHex("000000010203fffe80")
	tv4Ext  = withAK(map[string]string{"a": "PG_demo", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "1", "f": "0",
		"g": "1700000000000", "h": "0", "i": "", "j": "0", "k": "false", "l": "0", "m": "true", "n": "broker-a"})
	tv6Ext = withAK(map[string]string{"topic": "TopicTest", "key": "ORDER-1", "maxNum": "32", "beginTimestamp": "0",
		"endTimestamp": "1700000000000", UniqueKeyQuery: "false"})
	// §1.4: a Go SEND_MESSAGE (10).
	tv10Ext = withAK(map[string]string{"producerGroup": "PG_demo", "topic": "TopicTest", "queueId": "0", "sysFlag": "0",
		"flag": "0", "reconsumeTimes": "0", "maxReconsumeTimes": "0", "bornTimestamp": "1700000000000",
		"unitMode": "false", "batch": "false", "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"properties": "UNIQ_KEY\x01AC110001000018B4AAC2\x02WAIT\x01true\x02", "bname": "broker-a"})
	tv10Body = []byte("Hello RocketMQ")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// signVector is one row of §7: extFields (AccessKey included) and body, the
// string to sign under skip, and its Signature.
type signVector struct {
	id   string
	sk   string // "" for testSK
	ext  map[string]string
	body []byte
	skip func(string) bool
	text string
	sig  string
}

var signVectors = []signVector{
	{id: "TV1", sk: "adiaushdiaushd", ext: map[string]string{}, body: []byte("Hello RocketMQ Client ACL Feature"),
		text: "Hello RocketMQ Client ACL Feature", sig: "tAb/54Rwwcq+pbH8Loi7FWX4QSQ="},
	{id: "TV2", ext: withAK(map[string]string{"topic": "TopicTest"}),
		text: "RocketMQTopicTest", sig: "0jiwhsaYp5ObE5GObbZH1I8/FT4="},
	{id: "TV3", ext: withAK(nil), body: tv3Body,
		text: "RocketMQ" + string(tv3Body), sig: "wjomFp2SysnhY1d5icq5f9+Smbc="},
	{id: "TV4", ext: tv4Ext, body: tv4Body,
		text: "RocketMQPG_demoTopicTestTBW102410170000000000000false0truebroker-a" + string(tv4Body),
		sig:  "65WFFxiG7bXGNTS7/4NzgTHhca0="},
	// TV4b: a Java broker reads an empty binary-header value as null.
	{id: "TV4b", ext: mod(tv4Ext, "i", "null"), body: tv4Body,
		text: "RocketMQPG_demoTopicTestTBW10241017000000000000null0false0truebroker-a" + string(tv4Body),
		sig:  "PRNZ+RxLxiGJRkpNd+BTHpwPorU="},
	{id: "TV5", ext: withAK(map[string]string{"topic": "TopicTest", "SecurityToken": "tok123"}),
		text: "RocketMQtok123TopicTest", sig: "WQF9rEGPzRK3sncYyfnjSU8Z/No="},
	{id: "TV5go", ext: withAK(map[string]string{"topic": "TopicTest", "SecurityToken": "tok123"}),
		skip: func(k string) bool { return k == "SecurityToken" },
		text: "RocketMQTopicTest", sig: "0jiwhsaYp5ObE5GObbZH1I8/FT4="},
	{id: "TV6", ext: tv6Ext,
		text: "RocketMQfalse01700000000000ORDER-132TopicTest", sig: "/bUJDlN/Z/rUo2tXXbulbUr7Ci4="},
	{id: "TV6b", ext: tv6Ext, skip: func(k string) bool { return k == UniqueKeyQuery },
		text: "RocketMQ01700000000000ORDER-132TopicTest", sig: "vPxBq7xxrg1gR0vWhdavtYWuiSI="},
	{id: "TV7", ext: withAK(nil), text: "RocketMQ", sig: "IUc8rrO/0gDch8CjObLQsW2rsiA="},
	// TV8: values-only concatenation collides, so each signature verifies the other request.
	{id: "TV8a", ext: withAK(map[string]string{"a": "xy", "b": ""}), text: "RocketMQxy", sig: "re6PR3GhvgEcK8uJr+CrJaKYxF8="},
	{id: "TV8b", ext: withAK(map[string]string{"a": "x", "b": "y"}), text: "RocketMQxy", sig: "re6PR3GhvgEcK8uJr+CrJaKYxF8="},
	{id: "TV9", ext: withAK(map[string]string{"topic": "主题A"}),
		text: string(mustHex("526f636b65744d51e4b8bbe9a29841")), sig: "u3HG2czQaTULABZnjN65bJjQitA="},
	{id: "TV10", ext: tv10Ext, body: tv10Body,
		text: "RocketMQfalsebroker-a1700000000000TBW102400PG_demoUNIQ_KEY\x01AC110001000018B4AAC2\x02WAIT\x01true\x02000TopicTestfalseHello RocketMQ",
		sig:  "e3aJ6DWWeeR72BKp24sNWXGW5Eg="},
}

func TestSignVectors(t *testing.T) {
	for _, tc := range signVectors {
		t.Run(tc.id, func(t *testing.T) {
			got := StringToSign(tc.ext, tc.body, tc.skip)
			if string(got) != tc.text {
				t.Fatalf("StringToSign = %q, want %q", got, tc.text)
			}
			sk := cmp.Or(tc.sk, testSK)
			if sig := Sign(sk, got); sig != tc.sig {
				t.Fatalf("Sign = %s, want %s", sig, tc.sig)
			}
			signed := withSig(tc.ext, tc.sig)
			if !Verify(sk, signed, tc.body, tc.skip) {
				t.Fatalf("Verify of its own signature = false")
			}
			if !bytes.Equal(StringToSign(signed, tc.body, tc.skip), got) {
				t.Fatalf("Signature entry changed the string to sign")
			}
		})
	}
	if got := len(StringToSign(tv10Ext, tv10Body, nil)); got != 121 {
		t.Errorf("§1.4 string to sign is %d bytes, want 121", got)
	}
	if got := len(tv3Body); got != 91 {
		t.Errorf("TV3 body is %d bytes, want 91", got)
	}
}

// The mismatches the reference predicts: what a broker sees differs from what
// the client signed.
func TestVerifyMismatchVectors(t *testing.T) {
	// TV4b: signed with i="" (TV4), received as i="null".
	tv4b := withSig(tv4Ext, "65WFFxiG7bXGNTS7/4NzgTHhca0=")
	tv4b["i"] = "null"
	if Verify(testSK, tv4b, tv4Body, nil) {
		t.Error("TV4b: a value signed as \"\" verified as \"null\"")
	}
	// TV5go: the Go client sends SecurityToken but does not sign it.
	tv5go := withSig(withAK(map[string]string{"topic": "TopicTest", "SecurityToken": "tok123"}), "0jiwhsaYp5ObE5GObbZH1I8/FT4=")
	if Verify(testSK, tv5go, nil, nil) || VerifyRequest(testSK, tv5go, nil) {
		t.Error("TV5go: a Go signature without the token verified")
	}
}

func TestVerifyRequestUniqueKeyQuery(t *testing.T) {
	const tv6, tv6b = "/bUJDlN/Z/rUo2tXXbulbUr7Ci4=", "vPxBq7xxrg1gR0vWhdavtYWuiSI="
	noFlag := maps.Clone(tv6Ext)
	delete(noFlag, UniqueKeyQuery)
	tests := []struct {
		name string
		ext  map[string]string
		sig  string
		want bool
	}{
		{"flag sent and signed (4.9.x Java client)", tv6Ext, tv6, true},
		{"flag sent, not signed (4.9.x broker rule)", tv6Ext, tv6b, true},
		{"no flag, signed without it", noFlag, tv6b, true},
		{"no flag, signature over a flag that was not sent", noFlag, tv6, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := VerifyRequest(testSK, withSig(tc.ext, tc.sig), nil); got != tc.want {
				t.Fatalf("VerifyRequest = %v, want %v", got, tc.want)
			}
		})
	}
	if Verify(testSK, withSig(tv6Ext, tv6b), nil, nil) {
		t.Error("Verify without the fallback accepted TV6b with the flag present")
	}
}

func TestVerifyRequestExtraSkip(t *testing.T) {
	ext := withSig(tv10Ext, "e3aJ6DWWeeR72BKp24sNWXGW5Eg=")
	ext["rocketraftForwarded"] = "true"
	if !VerifyRequest(testSK, ext, tv10Body, "rocketraftForwarded") {
		t.Error("a field named in extraSkip was signed")
	}
	if VerifyRequest(testSK, ext, tv10Body) {
		t.Error("an unsigned field added on the way verified without extraSkip")
	}
}

func TestVerifyRefuses(t *testing.T) {
	good := withSig(tv10Ext, "e3aJ6DWWeeR72BKp24sNWXGW5Eg=")
	if !Verify(testSK, good, tv10Body, nil) {
		t.Fatal("the §1.4 example does not verify")
	}
	renamed := maps.Clone(good)
	delete(renamed, "bname")
	renamed["zbname"] = "broker-a" // moves broker-a to the end of the string
	tamper := []struct {
		name   string
		secret string
		ext    map[string]string
		body   []byte
	}{
		{"value", testSK, mod(good, "topic", "TopicTesu"), tv10Body},
		{"key renamed", testSK, renamed, tv10Body},
		{"field added", testSK, mod(good, "zz", "1"), tv10Body},
		{"field removed", testSK, mod(good, "unitMode", ""), tv10Body},
		{"body", testSK, good, []byte("Hello RocketMQ!")},
		{"no body", testSK, good, nil},
		{"wrong secret", "12345679", good, tv10Body},
		{"empty secret", "", good, tv10Body},
		{"no Signature", testSK, mod(good, "Signature", ""), tv10Body},
		{"empty Signature", testSK, withSig(good, ""), tv10Body},
		{"Signature case", testSK, withSig(good, strings.ToLower("e3aJ6DWWeeR72BKp24sNWXGW5Eg=")), tv10Body},
		{"Signature unpadded", testSK, withSig(good, "e3aJ6DWWeeR72BKp24sNWXGW5Eg"), tv10Body},
	}
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			if Verify(tc.secret, tc.ext, tc.body, nil) || VerifyRequest(tc.secret, tc.ext, tc.body) {
				t.Fatal("a tampered request verified")
			}
		})
	}
}

// mod returns a copy of ext with key set to v, or deleted when v is "".
func mod(ext map[string]string, key, v string) map[string]string {
	out := maps.Clone(ext)
	if v == "" {
		delete(out, key)
	} else {
		out[key] = v
	}
	return out
}

// decodeExt reads fuzz bytes as extFields, one "key=value" a line (a later key wins).
func decodeExt(enc []byte) map[string]string {
	ext := map[string]string{}
	for line := range strings.SplitSeq(string(enc), "\n") {
		k, v, _ := strings.Cut(line, "=")
		ext[k] = v
	}
	return ext
}

func encodeExt(ext map[string]string) []byte {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(ext)) {
		b = fmt.Appendf(b, "%s=%s\n", k, ext[k])
	}
	return bytes.TrimSuffix(b, []byte("\n"))
}

// FuzzVerify signs random fields and body with a random secret, then tampers
// with one byte of the body, of a value, of a key and of the secret: Verify
// must hold exactly when the string to sign and the Signature are unchanged.
// Keys starting "skip" are skipped, so tampering there must still verify.
func FuzzVerify(f *testing.F) {
	for i, v := range signVectors {
		f.Add(encodeExt(v.ext), v.body, cmp.Or(v.sk, testSK), uint16(i), byte(1))
	}
	f.Add([]byte("AccessKey=RocketMQ\nskipMe=x\nSignature=junk\n"+UniqueKeyQuery+"=true"), []byte{0}, "k", uint16(1), byte(0x80))
	f.Fuzz(func(t *testing.T, enc, body []byte, secret string, pos uint16, mask byte) {
		skip := func(k string) bool { return strings.HasPrefix(k, "skip") }
		ext := decodeExt(enc)
		text := StringToSign(ext, body, skip)
		sig := Sign(secret, text)
		signed := withSig(ext, sig)
		if secret == "" {
			if Verify(secret, signed, body, skip) {
				t.Fatal("an empty secret verified")
			}
			return
		}
		if !Verify(secret, signed, body, skip) {
			t.Fatalf("Sign then Verify = false for %q", text)
		}
		if mask == 0 {
			mask = 0x80
		}
		flip := func(s string) string {
			b := []byte(s)
			b[int(pos)%len(b)] ^= mask
			return string(b)
		}
		check := func(what string, ext2 map[string]string, body2 []byte) {
			t.Helper()
			want := bytes.Equal(StringToSign(ext2, body2, skip), text) && ext2[SignatureField] == sig
			if got := Verify(secret, ext2, body2, skip); got != want {
				t.Fatalf("tampered %s: Verify = %v, want %v", what, got, want)
			}
		}
		if len(body) > 0 {
			check("body", signed, []byte(flip(string(body))))
		}
		keys := slices.Sorted(maps.Keys(signed))
		k := keys[int(pos)%len(keys)]
		if v := signed[k]; v != "" {
			check("value of "+k, mod(signed, k, flip(v)), body)
		}
		if k != "" {
			renamed := maps.Clone(signed)
			delete(renamed, k)
			renamed[flip(k)] = signed[k]
			check("key "+k, renamed, body)
		}
		if Verify(flip(secret), signed, body, skip) {
			t.Fatal("a changed secret verified")
		}
	})
}
