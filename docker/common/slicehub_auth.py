"""SliceHub's token check for JupyterLab on a shared Slurm node.

A Slurm job's environment is kept by Slurm (state files, and accounting where the site stores
job environments), so the job is never given the session's token: it gets only the token's
SHA-256 (SLICEHUB_TOKEN_SHA256). The portal presents the token; this provider admits a request
whose token hashes to that value, and nothing else.

Before the portal sends the token to the node's port, the listener must prove it was given
this session's hash: GET <base_url>api/slicehub/proof?nonce=<hex> answers
HMAC-SHA256(key = the hash in hex, message = "<the port it listens on>:<nonce>"). The port
binds the answer to this listener: a squatter cannot pass the challenge on to the real
notebook on a neighbouring port and hand back its answer. A program of another Unix user that
took the port first cannot answer, so it never receives the token nor the student's traffic.
(Where every job runs as one shared user, that user's programs can read the hash too.)

Used by slicehub-notebook when SLICEHUB_TOKEN_SHA256 is set:
    --ServerApp.identity_provider_class=slicehub_auth.HashedTokenIdentityProvider
"""

import hashlib
import hmac
import inspect
import os
import re
import secrets
import sys

from jupyter_server.auth.decorator import allow_unauthenticated
from jupyter_server.auth.identity import PasswordIdentityProvider
from tornado import web
from traitlets import Unicode, default

HEX64 = re.compile(r"[0-9a-f]{64}")
NONCE = re.compile(r"[0-9a-f]{32,128}")


def proof(token_sha256: str, port: int, nonce: str) -> str:
    return hmac.new(token_sha256.encode(), f"{port}:{nonce}".encode(), hashlib.sha256).hexdigest()


class ProofHandler(web.RequestHandler):
    """Answers the portal's challenge; needs no login and reveals nothing of the hash."""

    def initialize(self, token_sha256: str) -> None:
        self.token_sha256 = token_sha256

    @allow_unauthenticated
    def get(self) -> None:
        nonce = self.get_argument("nonce", "")
        if not NONCE.fullmatch(nonce):
            raise web.HTTPError(400)
        self.set_header("Content-Type", "text/plain; charset=us-ascii")
        self.set_header("Cache-Control", "no-store")
        port = self.request.connection.stream.socket.getsockname()[1]
        self.finish(proof(self.token_sha256, port, nonce))


class HashedTokenIdentityProvider(PasswordIdentityProvider):
    token_sha256 = Unicode(config=True, help="SHA-256 (hex) of the only token admitted.")

    @default("token_sha256")
    def _token_sha256_default(self) -> str:
        return os.environ.get("SLICEHUB_TOKEN_SHA256", "").strip().lower()

    def validate_security(self, app, ssl_options=None) -> None:
        super().validate_security(app, ssl_options)
        if not HEX64.fullmatch(self.token_sha256):
            self.log.critical("SLICEHUB_TOKEN_SHA256 must be 64 hex digits: the notebook does not start")
            sys.exit(1)

    @default("token")
    def _token_default(self) -> str:
        # Keeps Jupyter's auth switched on; this value is never printed anywhere it admits.
        self.token_generated = False
        return secrets.token_hex(32)

    def admits(self, presented: str | None) -> bool:
        if not presented:
            return False
        digest = hashlib.sha256(presented.encode()).hexdigest()
        return hmac.compare_digest(digest, self.token_sha256)

    async def get_user_token(self, handler):
        if not self.admits(self.get_token(handler)):
            return None
        user = self.get_user_cookie(handler)
        if inspect.isawaitable(user):
            user = await user
        return user or self.generate_anonymous_user(handler)

    def process_login_form(self, handler):
        typed = handler.get_argument("password", default="")
        return self.generate_anonymous_user(handler) if self.admits(typed) else None

    def get_handlers(self):
        proof_route = (r"/api/slicehub/proof", ProofHandler, {"token_sha256": self.token_sha256})
        return [proof_route, *super().get_handlers()]
