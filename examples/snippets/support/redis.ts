// `import ... from 'redis'` in the snippets: this repository installs node-redis
// under the names redis4 and redis5 (both are tested); a user's project has it
// as `redis`. examples/snippets/tsconfig.json maps the name here.
export * from 'redis5';
