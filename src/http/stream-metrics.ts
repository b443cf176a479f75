/** @module Prometheus metrics of the streams: connections, subscriptions, messages out, conflated snapshots, dropped clients, fan-out lag. */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { CHANNELS, type StreamHub } from '../live/stream-hub.js'
import { DROP_REASONS, type StreamConnections } from './stream-connections.js'

/** Counters kept as plain numbers by the stream code, read when scraped (as the response cache's are). */
function counted(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset()
      this.inc(read())
    },
  })
}

export function watchStreams(registry: Registry, hub: StreamHub, connections: StreamConnections): void {
  const registers = [registry]
  const { counts, streams } = connections
  new Gauge({
    name: 'mdq_stream_connections',
    help: 'Open WebSocket stream connections',
    registers,
    collect() {
      this.set(streams.totals.connections)
    },
  })
  new Gauge({
    name: 'mdq_stream_subscriptions',
    help: 'Stream subscriptions (symbols per connection), by channel',
    labelNames: ['channel'] as const,
    registers,
    collect() {
      for (const channel of CHANNELS) this.set({ channel }, streams.totals.subscriptions[channel])
    },
  })
  counted(registry, 'mdq_stream_messages_out_total', 'Stream messages sent', () => counts.messages)
  counted(registry, 'mdq_stream_snapshots_out_total', 'Snapshots sent to stream clients', () => counts.snapshots)
  counted(
    registry,
    'mdq_stream_conflated_total',
    'Snapshots replaced by a newer one of the same symbol while their client was behind',
    () => counts.conflated,
  )
  counted(
    registry,
    'mdq_stream_stale_total',
    'Snapshots older than the latest of their symbol and channel, or repeating it: not passed on',
    () => hub.counts.stale,
  )
  new Counter({
    name: 'mdq_stream_dropped_clients_total',
    help: 'Stream connections the server closed, by reason (slow, unresponsive, revoked key, protocol error)',
    labelNames: ['reason'] as const,
    registers,
    collect() {
      this.reset()
      for (const reason of DROP_REASONS) this.inc({ reason }, counts.dropped[reason])
    },
  })
  const lag = new Histogram({
    name: 'mdq_stream_fanout_lag_seconds',
    help: 'From a batch of snapshots published (at the instance that accepted it) to its hand-over to this instance’s subscribers, by origin',
    labelNames: ['origin'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  })
  hub.onDelivered((batch, origin, nowMs) => {
    if (origin !== 'catch-up') lag.observe({ origin }, Math.max(0, nowMs - batch.publishedMs) / 1000)
  })
}
