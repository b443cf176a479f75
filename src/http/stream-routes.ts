/**
 * @module TickFlow's WebSocket endpoints: `/v1/ws/stream` (quotes and depth channels, the SDK's
 * `tf.stream`) and `/v1/ws/quotes` (quotes only, its deprecated `tf.realtime`). The handshake is an
 * ordinary /v1 request (the same auth hook, then the key's connection cap), so a refusal is an HTTP
 * status with a `{code, message}` body, which the SDK reads as its reason.
 */
import websocket, { type WebsocketPluginOptions } from '@fastify/websocket'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { MdqError } from '../domain/errors.js'
import { CHANNELS, type Channel } from '../live/stream-hub.js'
import { sendError } from './errors.js'
import type { StreamConnections } from './stream-connections.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A WebSocket endpoint: the one kind of route an upgrade request may reach. */
    stream?: boolean
  }
}

export const STREAM_ENDPOINTS: readonly { readonly url: string; readonly channels: readonly Channel[] }[] = [
  { url: '/ws/stream', channels: CHANNELS },
  { url: '/ws/quotes', channels: ['quotes'] },
]

/**
 * @fastify/websocket on the whole app, before any route: every upgrade request is routed by Fastify
 * (its hooks run), and one that reaches a route other than a stream endpoint is answered 404 here,
 * before the plugin would take it over (and log its URL, key included).
 */
export async function registerWebSockets(app: FastifyInstance, connections: StreamConnections): Promise<void> {
  const options: WebsocketPluginOptions = {
    // No permessage-deflate: it would cost one deflate per subscriber and message; the SDK offers it and works without.
    options: { maxPayload: connections.limits.maxMessageBytes, perMessageDeflate: false },
    preClose: () => connections.closeAll(),
    errorHandler: (err, socket) => connections.failed(err, socket),
  }
  await app.register(websocket, options)
  // Node hands an upgrade request's socket over whole: an answer does not close it. The plugin closes
  // those it saw; one answered before its hook (the closing 503 of a shutdown, a 414) is closed here,
  // or a client that reconnects while the server closes would hold the close open.
  app.addHook('onResponse', async (req) => {
    if ((req.raw as { upgrade?: boolean }).upgrade === true) req.raw.socket.destroy()
  })
  app.addHook('onRequest', async (req, reply) => {
    if (!req.ws) return
    // A refused handshake's socket is closed once answered (the plugin's onResponse): say so.
    reply.header('Connection', 'close')
    if (req.routeOptions.config.stream !== true)
      return sendError(
        reply,
        404,
        `No WebSocket endpoint at ${req.url.split('?')[0]}; the streams are /v1/ws/stream and /v1/ws/quotes.`,
      )
  })
}

/** The two endpoints, in the /v1 scope (after its auth hook). */
export const streamRoutes: FastifyPluginAsync<{ connections: StreamConnections }> = async (app, { connections }) => {
  for (const { url, channels } of STREAM_ENDPOINTS)
    app.get(
      url,
      {
        websocket: true,
        config: { stream: true },
        onRequest: async (req, reply) => {
          if (!req.ws) {
            reply.header('Upgrade', 'websocket')
            throw new MdqError(
              'NOT_WEBSOCKET',
              `/v1${url} is a WebSocket endpoint: connect to ws://<host>/v1${url}?api_key=<key> (the TickFlow SDK's ${url === '/ws/stream' ? 'tf.stream' : 'tf.realtime'}).`,
            )
          }
          connections.admit(req.apiKey!.id)
        },
      },
      (socket, req) => connections.accept(socket, req, channels),
    )
}
