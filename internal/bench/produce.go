package bench

import "context"

// Produce sends messages with the chosen client and reports progress: a line
// each second, then the summary with a percentile table per latency series
// (and the same as CSV rows or JSON lines when o.CSV or o.JSON is set).
func Produce(ctx context.Context, o ProduceOptions) (Result, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return Result{}, err
	}
	r := newRunner(o)
	var err error
	if o.Client == ClientNative {
		err = produceNative(ctx, o, r)
	} else {
		err = produceGo(ctx, o, r)
	}
	return resultOf(r.summary), err
}
