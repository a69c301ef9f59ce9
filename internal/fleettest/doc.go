// Package fleettest tests -x otlp against real receivers started on
// loopback: an OpenTelemetry Collector (otlp receiver, file exporter)
// and Jaeger, each built from its own module here (collector/,
// jaeger/), so that neither is in dtrace's binary or its module's
// dependencies. The first test run builds them into the user's cache
// directory (a few minutes; later runs reuse them while the modules'
// go.sum stay the same).
package fleettest
