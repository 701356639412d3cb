// rolling-rate-limiter 0.4.2's Quick start, ported (docs/guides/migrating-from-rolling-rate-limiter.md): as
// its README has it, and as it works. Nothing is sent to the first one: its first request would end the process.
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS, as rolling-rate-limiter's README has it */
/* global fetch */
const express = require('express');
const { Redis } = require('ioredis');

const redisClient = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

function portedAsIs(app) {
  // docs:begin as-is
  // rolling-rate-limiter 0.4.2's README, with the import and the class name changed: do not use
  const { RollingRateLimiter } = require('rolling-window-limiter');

  const limiter = new RollingRateLimiter({ client: redisClient, namespace: 'rate-limiter', interval: 60000, maxInInterval: 5 });

  app.use(function (req, res, next) {
    limiter.limit(req.ipAddress).then((wasBlocked) => {
      if (wasBlocked) {
        return res.status(429).send('Too many requests');
      } else {
        return next();
      }
    });
  });
  // docs:end
}

function portedThatWorks(app) {
  // docs:begin works
  const { RollingRateLimiter } = require('rolling-window-limiter');

  const limiter = new RollingRateLimiter({ client: redisClient, namespace: 'rate-limiter', interval: 60000, maxInInterval: 5 });

  app.use(function (req, res, next) {
    limiter.limit(req.ip).then((wasBlocked) => {
      if (wasBlocked) {
        return res.status(429).send('Too many requests');
      } else {
        return next();
      }
    }, next); // a rejection (a store failure, a missing id) goes to Express's error handling: a 500, not an exit
  });
  // docs:end
}

async function main() {
  portedAsIs(express());
  const app = express();
  portedThatWorks(app);
  app.get('/', (req, res) => res.send('hello'));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((listening) => server.once('listening', listening));
  const response = await fetch(`http://127.0.0.1:${server.address().port}/`);
  console.log(response.status, await response.text());
  server.close();
  await redisClient.quit();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
