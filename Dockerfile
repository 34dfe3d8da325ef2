# syntax=docker/dockerfile:1
# The Cohent server: the packed tarball (`npm run pack` → cohent-<version>.tgz), installed the way a
# user installs it, on Node 24 slim (an LTS line the whole test suite runs on; Node 20 is past its end
# of life), run as a non-root user with its data folder on a volume.
#   npm run pack && docker build -t cohent .
#   docker run -p 4317:4317 -v cohent-data:/data cohent
# DATABASE_URL=postgresql://… switches the embedded SQLite for PostgreSQL (see compose.yaml).

FROM node:24-slim AS install
# better-sqlite3 compiles from source when its prebuilt binary cannot be downloaded.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY cohent-*.tgz /tmp/
RUN npm install -g --prefix /opt/cohent --no-audit --no-fund /tmp/cohent-*.tgz \
 && npm cache clean --force

FROM node:24-slim
# The build tools stay in the first stage; this one gets the installed package only.
COPY --from=install /opt/cohent /opt/cohent
ENV PATH=/opt/cohent/bin:$PATH \
    NODE_ENV=production \
    COHENT_HOST=0.0.0.0 \
    COHENT_PORT=4317 \
    COHENT_DATA_DIR=/data
# The image's own unprivileged `node` user (uid 1000) owns the data folder and runs the server.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4317
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.COHENT_PORT||4317)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["cohent"]
CMD ["serve"]
