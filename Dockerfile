# story-harness: the GitHub App, with git for its runner.
# Stage 1 compiles the TypeScript to dist/ and installs the production dependencies; the image
# that runs holds only JavaScript and those (no TypeScript loader, no dev dependencies).
# BASE_IMAGE: node:20-slim, or an image built the same way (Debian bookworm with Node 20 in
# /usr/local), as the image test builds where the registry cannot be reached.
ARG BASE_IMAGE=node:20-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 # What no running App reads: type declarations, source maps, docs and tests of the dependencies.
 && find node_modules \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' -o -name '*.markdown' \) -type f -delete \
 && find dist -name '*.map' -type f -delete

FROM ${BASE_IMAGE}

# git for cloning and pushing; ca-certificates for HTTPS; tini reaps the agents' processes;
# bubblewrap is the sandbox every process that runs repository code goes through, and
# slirp4netns (with iproute2's ip, and netbase's /etc/protocols for its rules) gives a networked step
# its own network namespace.
# No docs, manuals or locales: nobody reads them in a container.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini bubblewrap slirp4netns iproute2 netbase \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
           /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/* \
           /usr/share/git-core/templates/hooks/*.sample

# HOST: Probot listens on localhost unless told otherwise, which no published port reaches.
ENV NODE_ENV=production \
    HARNESS_HOME=/var/lib/story-harness \
    HOST=0.0.0.0 \
    PORT=3000

# A non-root user owns the data directory; the App never runs as root.
RUN groupadd --system harness \
 && useradd --system --gid harness --create-home --home-dir /home/harness harness \
 && mkdir -p /var/lib/story-harness \
 && chown harness:harness /var/lib/story-harness

WORKDIR /app
COPY package.json package-lock.json app.yml ./
COPY bin ./bin
COPY schemas ./schemas
COPY workflows ./workflows
COPY prompts ./prompts
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist

USER harness
VOLUME ["/var/lib/story-harness"]
EXPOSE 3000

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/harness.js", "serve"]
