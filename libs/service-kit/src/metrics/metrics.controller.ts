import { Controller, Get, Header } from '@nestjs/common';
import { Public } from '../health/health.js';
import { metricsRegistry } from './metrics.js';

/** Prometheus scrapes this on the health port (the chart's annotations and ServiceMonitor point here). */
@Controller()
export class MetricsController {
  @Public()
  @Get('metrics')
  @Header('Content-Type', metricsRegistry.contentType)
  @Header('Cache-Control', 'no-store')
  metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
