# story-harness: the GitHub App, with git for its runner.
# Stage 1 compiles the TypeScript to dist/; the image that runs holds only JavaScript and the
# production dependencies (no TypeScript loader, no dev dependencies).
FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:20-slim

# git for cloning and pushing; ca-certificates for HTTPS; tini reaps the agents' processes;
# bubblewrap is the sandbox every process that runs repository code goes through.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini bubblewrap \
 && rm -rf /var/lib/apt/lists/*

ENV NODE_ENV=production \
    HARNESS_HOME=/var/lib/story-harness \
    PORT=3000

WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; install scripts are not run.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

COPY bin ./bin
COPY --from=build /src/dist ./dist
COPY schemas ./schemas
COPY workflows ./workflows
COPY prompts ./prompts
COPY app.yml ./

# A non-root user owns the data directory; the App never runs as root.
RUN groupadd --system harness \
 && useradd --system --gid harness --create-home --home-dir /home/harness harness \
 && mkdir -p /var/lib/story-harness \
 && chown harness:harness /var/lib/story-harness
USER harness
VOLUME ["/var/lib/story-harness"]
EXPOSE 3000

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/harness.js", "serve"]
