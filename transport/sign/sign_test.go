package sign

import "testing"

// broker/auth's tests hold the full vector table of the security reference
// (§7) and FuzzVerify; these pin the package's own contract.

func TestSignTV2(t *testing.T) {
	// TV2: AK=RocketMQ, SK=12345678, topic=TopicTest.
	ext := map[string]string{AccessKeyField: "RocketMQ", "topic": "TopicTest"}
	if got := string(StringToSign(ext, nil, nil)); got != "RocketMQTopicTest" {
		t.Fatalf("StringToSign = %q", got)
	}
	if got := Sign("12345678", StringToSign(ext, nil, nil)); got != "0jiwhsaYp5ObE5GObbZH1I8/FT4=" {
		t.Fatalf("Sign = %s", got)
	}
}

func TestCredentialsSignExt(t *testing.T) {
	cred := Credentials{AccessKey: "broker:broker-a", SecretKey: "0123456789abcdef"}
	ext := map[string]string{"brokerName": "broker-a", SignatureField: "stale"}
	body := []byte("{}")
	signed := cred.SignExt(ext, body)
	if ext[AccessKeyField] != "" || ext[SignatureField] != "stale" {
		t.Fatal("SignExt changed its argument")
	}
	if signed[AccessKeyField] != cred.AccessKey || !VerifyRequest(cred.SecretKey, signed, body) {
		t.Fatalf("SignExt output does not verify: %v", signed)
	}
	if VerifyRequest("0123456789abcdeX", signed, body) || VerifyRequest(cred.SecretKey, signed, []byte("{ }")) {
		t.Fatal("a wrong secret or body verified")
	}
	if got := (Credentials{}).SignExt(ext, body); got["AccessKey"] != "" {
		t.Fatal("empty credentials signed")
	}
}
