// Command collector is an OpenTelemetry Collector of three components,
// an OTLP receiver, a file exporter and the bearer-token authenticator
// (which checks a header that OTEL_EXPORTER_OTLP_HEADERS sets), built from the Collector's Go
// modules for dtrace's OTLP tests (output/otlp): the tests start it on
// loopback ports and read back what it wrote. It is a module of its
// own, so that the Collector stays out of dtrace's dependencies.
package main

import (
	"log"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func components() (otelcol.Factories, error) {
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](fileexporter.NewFactory()); err != nil {
		return f, err
	}
	if f.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](bearertokenauthextension.NewFactory()); err != nil {
		return f, err
	}
	return f, nil
}

func main() {
	info := component.BuildInfo{Command: "collector", Description: "dtrace's test Collector", Version: "test"}
	cmd := otelcol.NewCommand(otelcol.CollectorSettings{BuildInfo: info, Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
			DefaultScheme:     "env"}}})
	if err := cmd.Execute(); err != nil {
		log.Fatal(err)
	}
}
