// Nest applications for the integration tests: a testing module served on
// 127.0.0.1 port 0 by @nestjs/platform-express or @nestjs/platform-fastify,
// and requests to it that keep the headers the tests look at.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModuleMetadata } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';

/** The two HTTP platforms of Nest. */
export type Platform = 'express' | 'fastify';

/** A listening Nest application. */
export interface RunningApp {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Compiles a testing module of `metadata` and serves it on `platform`. */
export async function startApp(platform: Platform, metadata: ModuleMetadata): Promise<RunningApp> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
  const app = moduleRef.createNestApplication(adapter, { logger: false });
  await app.listen(0, '127.0.0.1');
  const address = (app.getHttpServer() as Server).address() as AddressInfo;
  return { url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

/** What a test reads from a response: the status, the headers named in `HEADERS`, and the body. */
export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const HEADERS = [
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After-second',
  'X-RateLimit-Remaining-second',
  'Retry-After-minute',
  'X-RateLimit-Remaining-minute',
];

/** Sends one request (bounded by a 10 s timeout) and reads the answer. */
export async function send(url: string, { method = 'GET', headers = {} }: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const response = await fetch(url, { method, headers, signal: AbortSignal.timeout(10_000) });
  const seen: Record<string, string> = {};
  for (const name of HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) seen[name] = value;
  }
  return { status: response.status, headers: seen, body: await response.text() };
}
