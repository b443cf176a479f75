/** @module The chart page at / and the API reference at /docs, served from this process (no CDN). */
import helmet from '@fastify/helmet'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyPluginAsync } from 'fastify'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** web/ at the package root (this file runs from dist/src/http/). */
const WEB_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'web')
const CHARTS = join(
  dirname(createRequire(import.meta.url).resolve('lightweight-charts/package.json')),
  'dist',
  'lightweight-charts.standalone.production.js',
)

const ASSETS: Record<string, { file: string; type: string }> = {
  '/': { file: join(WEB_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
  '/assets/app.js': { file: join(WEB_DIR, 'app.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/live.js': { file: join(WEB_DIR, 'live.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/style.css': { file: join(WEB_DIR, 'style.css'), type: 'text/css; charset=utf-8' },
  '/assets/lightweight-charts.js': { file: CHARTS, type: 'text/javascript; charset=utf-8' },
}

const ICON = readFileSync(join(WEB_DIR, 'favicon.svg'))

/**
 * Browser hardening of the pages (helmet's defaults: nosniff, no referrer, same-origin isolation),
 * with a CSP that allows only this origin's scripts (the page and Swagger UI load no inline or
 * remote script) and no framing. Not `upgrade-insecure-requests`: mdq is often served over plain
 * HTTP on a LAN address, where upgrading its own requests to https would break the page. No HSTS
 * for the same reason (TLS, if any, is a proxy's to announce).
 */
const HELMET = {
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"], // Swagger UI styles some elements inline
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      frameAncestors: ["'none'"],
      upgradeInsecureRequests: null,
    },
  },
  frameguard: { action: 'deny' },
  strictTransportSecurity: false,
} as const

/** This plugin is encapsulated (no fastify-plugin): helmet's hooks apply to the page and /docs, not to the JSON API. */
export const pagesPlugin: FastifyPluginAsync = async (app) => {
  await app.register(helmet, HELMET)
  for (const [url, { file, type }] of Object.entries(ASSETS)) {
    const body = readFileSync(file) // read once at startup: a handful of small files
    app.get(url, { schema: { hide: true } }, async (_req, reply) =>
      reply.type(type).header('Cache-Control', 'no-cache').send(body),
    )
  }
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { persistAuthorization: true, tryItOutEnabled: true },
    // mdq's name and icon, and no top bar (the framework's logo and a box to load other documents);
    // the logo option only keeps @fastify/swagger-ui from putting Fastify's logo in the hidden bar.
    logo: { type: 'image/svg+xml', content: ICON, href: '/' },
    theme: {
      title: 'mdq · API reference',
      css: [{ filename: 'mdq.css', content: readFileSync(join(WEB_DIR, 'docs.css'), 'utf8') }],
      favicon: [
        {
          filename: 'mdq.svg',
          rel: 'icon',
          sizes: 'any',
          type: 'image/svg+xml',
          content: ICON,
        },
      ],
    },
  })
}
