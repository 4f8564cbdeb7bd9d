import { Histogram, type Counter, type Registry } from 'prom-client';

type RequestLabel = 'method' | 'route' | 'status';
type RequestLabels = Readonly<Record<RequestLabel, string>>;

/** One label set's observations: per-bucket counts (not cumulative), their sum and count. */
interface Series {
  readonly labels: RequestLabels;
  readonly buckets: number[];
  sum: number;
  count: number;
}

/** A value as prom-client's registry renders it (its Histogram's own shape). */
interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string | number>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

/**
 * The latency histogram of every answered request, by method, route template and status: a
 * prom-client `Histogram` on the outside (its registry renders it, byte for byte as it renders
 * its own histograms: request-latency.spec.ts), with the observations kept in plain arrays per
 * label set. prom-client's own `observe` builds and hashes a label object, validates it and
 * looks its bucket up by a number-keyed property on every call, which measured about 7 µs of a
 * request's server CPU in the bench (docs/decisions/0079); `record` is a map lookup and three
 * increments. The requests counter is read from the same series (`counts`).
 */
export class RequestLatencyHistogram extends Histogram<RequestLabel> {
  private readonly series = new Map<string, Series>();
  private readonly bounds: readonly number[];
  private readonly seriesName: string;
  private readonly seriesHelp: string;

  constructor(config: { name: string; help: string; buckets: readonly number[]; registers: Registry[] }) {
    super({ ...config, buckets: [...config.buckets], labelNames: ['method', 'route', 'status'] });
    this.bounds = [...config.buckets];
    this.seriesName = config.name;
    this.seriesHelp = config.help;
    // prom-client sets `observe` on the instance; here `record` is the one way in.
    this.observe = () => {
      throw new Error('RequestLatencyHistogram records through record()');
    };
  }

  /** One answered request: `seconds` from its arrival to its last byte. */
  record(method: string, route: string, status: number, seconds: number): void {
    if (!Number.isFinite(seconds)) throw new TypeError(`not a duration: ${seconds}`);
    const key = `${status} ${method} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = {
        labels: { method, route, status: String(status) },
        buckets: new Array<number>(this.bounds.length).fill(0),
        sum: 0,
        count: 0,
      };
      this.series.set(key, series);
    }
    const { bounds } = this;
    let bucket = 0;
    while (bucket < bounds.length && seconds > bounds[bucket]) bucket++;
    if (bucket < bounds.length) series.buckets[bucket] += 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** Each label set with its number of requests, for the requests counter. */
  *counts(): IterableIterator<{ labels: RequestLabels; count: number }> {
    for (const { labels, count } of this.series.values()) yield { labels, count };
  }

  /** What the registry renders (prom-client's `Histogram.getForPromString`). */
  // eslint-disable-next-line @typescript-eslint/require-await -- the registry awaits it, as prom-client's own
  async getForPromString() {
    const name = this.seriesName;
    const values: ExportedValue[] = [];
    for (const series of this.series.values()) {
      const sharedLabels = { ...series.labels };
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += series.buckets[i];
        values.push({
          labels: { le: bound },
          sharedLabels,
          value: cumulative,
          metricName: `${name}_bucket`,
          exemplar: null,
        });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels, value: series.count, metricName: `${name}_bucket`, exemplar: null },
        { labels: {}, sharedLabels, value: series.sum, metricName: `${name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels, value: series.count, metricName: `${name}_count`, exemplar: undefined },
      );
    }
    return { name, help: this.seriesHelp, type: 'histogram' as const, values, aggregator: 'sum' as const };
  }

  /** The same values with each one's labels in one object, as prom-client's `Histogram.get`. */
  override async get(): ReturnType<Histogram<RequestLabel>['get']> {
    const data = await this.getForPromString();
    const values = data.values.map(({ labels, sharedLabels, ...value }) => ({
      ...value,
      labels: { ...labels, ...sharedLabels },
    }));
    return { ...data, values } as unknown as Awaited<ReturnType<Histogram<RequestLabel>['get']>>;
  }

  override reset(): void {
    // prom-client's constructor resets too, before this class's fields exist.
    this.series?.clear();
  }
}

/**
 * The `collect` of the requests counter: at each scrape the counter is set to the requests of
 * `histogram()` per label set, every answered request being recorded there once (decision 0079).
 * A function of the histogram, so the counter can be made, and registered, first.
 */
export function requestCountsOf(histogram: () => RequestLatencyHistogram) {
  return function (this: Counter<RequestLabel>): void {
    this.reset();
    for (const { labels, count } of histogram().counts()) this.inc(labels, count);
  };
}
