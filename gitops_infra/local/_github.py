"""GitHub, as Flux sees it when it fetches as a GitHub App, on loopback over HTTPS.

Source-controller's ``provider: github`` trades the App's key for an installation token at the API
(``POST <githubAppBaseURL>/app/installations/<id>/access_tokens``, with a JWT the key signed), then
fetches the repository over HTTPS as ``x-access-token:<token>``. :class:`GitHubAppServer` plays both
parts: it checks the JWT's RS256 signature with the App's public key and its issuer and expiry as
GitHub does, issues short-lived tokens, and serves a bare repository through ``git http-backend`` to
those tokens alone. It records what it issued and each fetch, so a test can tell that Flux fetched as
the App. Its certificate comes from the local cluster's CA, which the cluster's controllers trust.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import os
import re
import secrets
import ssl
import subprocess
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from ._project import require_local_extra

try:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
except ModuleNotFoundError:
    require_local_extra()
    raise

__all__ = ["GitHubApp", "GitHubAppServer"]

TOKEN_USER = "x-access-token"
"""The user name a GitHub App installation token is sent with (fluxcd/pkg/auth ``AccessTokenUsername``)."""
TOKEN_LIFETIME = datetime.timedelta(hours=1)
JWT_LONGEST = datetime.timedelta(minutes=10)
"""GitHub refuses an App's JWT that expires more than ten minutes after it was issued."""
_ACCESS_TOKENS = re.compile(r"^/api/v3/app/installations/(\d+)/access_tokens$")
_Reply = tuple[int, list[tuple[str, str]], bytes]


@dataclass(frozen=True)
class GitHubApp:
    """A GitHub App's IDs and key pair: RSA, the private key in the PKCS#1 PEM GitHub hands out."""

    app_id: int
    installation_id: int
    private_key: str
    public_key: str

    @classmethod
    def generate(cls, app_id: int = 123456, installation_id: int = 7890123) -> GitHubApp:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        public = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return cls(app_id, installation_id, private.decode(), public.decode())


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_problem(token: str, app: GitHubApp, now: datetime.datetime) -> str | None:
    """``None`` for a JWT ``app``'s key signed (RS256) that names it and is current, else why not."""
    try:
        header, claims, signature = token.split(".")
        if json.loads(_b64url(header)).get("alg") != "RS256":
            return "the JWT is not RS256"
        key = serialization.load_pem_public_key(app.public_key.encode())
        assert isinstance(key, rsa.RSAPublicKey)
        signed = f"{header}.{claims}".encode()
        key.verify(_b64url(signature), signed, padding.PKCS1v15(), hashes.SHA256())
        payload: dict[str, Any] = json.loads(_b64url(claims))
    except (ValueError, binascii.Error, InvalidSignature):
        return "A JSON web token could not be decoded"
    if str(payload.get("iss")) != str(app.app_id):
        return f"'Issuer' claim ('iss') must be the App's ID, {app.app_id}"
    issued = datetime.datetime.fromtimestamp(int(payload.get("iat", 0)), datetime.UTC)
    expires = datetime.datetime.fromtimestamp(int(payload.get("exp", 0)), datetime.UTC)
    if expires <= now or expires - issued > JWT_LONGEST or issued > now + datetime.timedelta(minutes=1):
        return "'Expiration time' claim ('exp') is too far in the future, or passed"
    return None


def _json(status: int, document: dict[str, Any]) -> _Reply:
    return status, [("Content-Type", "application/json")], json.dumps(document).encode()


class GitHubAppServer:
    """GitHub's token endpoint and its git over HTTPS, for one App and one repository, on loopback.

    ``repository`` (a bare repository, such as :attr:`FleetServer.repository`) is served at
    ``/<owner>/<name>.git``, read-only. ``certificate`` is the server's certificate and key
    (:meth:`LocalCluster.server_certificate`).
    """

    def __init__(
        self,
        workdir: Path,
        app: GitHubApp,
        repository: Path,
        certificate: tuple[Path, Path],
        *,
        owner: str = "acme",
        name: str = "fleet",
    ) -> None:
        self.workdir = workdir
        self.app = app
        self.certificate = certificate
        self.path = f"/{owner}/{name}.git"
        self.port = 0
        self.issued: dict[str, datetime.datetime] = {}
        """Each installation token issued, and when it expires."""
        self.fetches: list[str] = []
        """The token of each git request served (only issued, current tokens are served)."""
        self.refused: list[str] = []
        """Why each refused request was refused, GitHub's message first."""
        self._root = workdir / "repositories"
        link = self._root / owner / f"{name}.git"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(repository)
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """The repository's ``https://`` URL, as a GitRepository names it."""
        return f"https://127.0.0.1:{self.port}{self.path}"

    @property
    def api_url(self) -> str:
        """The API's base URL (``githubAppBaseURL``), as GitHub Enterprise Server names its own."""
        return f"https://127.0.0.1:{self.port}/api/v3"

    def start(self) -> Self:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*map(str, self.certificate))
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, name="github", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def respond(self, method: str, target: str, headers: Any, body: bytes) -> _Reply:
        """GitHub's answer to one request: a token for the App, git for a token, else 404."""
        path, _, query = target.partition("?")
        authorization = headers.get("Authorization", "")
        issue = _ACCESS_TOKENS.match(path)
        if issue and method == "POST":
            return _json(*self._issue(int(issue.group(1)), authorization))
        if not path.startswith(self.path + "/") or "receive-pack" in target:
            return _json(404, {"message": "Not Found"})
        token = self._token_of(authorization)
        if token is None:
            self._refuse(401, "Invalid username or token")
            return 401, [("WWW-Authenticate", 'Basic realm="GitHub"')], b"Invalid username or token.\n"
        with self._lock:
            self.fetches.append(token)
        return self._git(method, path, query, headers, body)

    def _issue(self, installation_id: int, authorization: str) -> tuple[int, dict[str, Any]]:
        now = datetime.datetime.now(datetime.UTC)
        problem = jwt_problem(authorization.removeprefix("Bearer "), self.app, now)
        if problem is not None or not authorization.startswith("Bearer "):
            return self._refuse(401, problem or "Requires authentication")
        if installation_id != self.app.installation_id:
            return self._refuse(404, "Not Found")
        token = f"ghs_{secrets.token_urlsafe(27)}"
        expires = now + TOKEN_LIFETIME
        with self._lock:
            self.issued[token] = expires
        return 201, {"token": token, "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}

    def _refuse(self, status: int, message: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.refused.append(f"{status} {message}")
        return status, {"message": message, "documentation_url": "https://docs.github.com/rest"}

    def _token_of(self, authorization: str) -> str | None:
        """The issued, current token a git request's Basic credentials carry, if any."""
        try:
            user, _, token = base64.b64decode(authorization.removeprefix("Basic ")).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        with self._lock:
            expires = self.issued.get(token)
        if user != TOKEN_USER or expires is None or expires <= datetime.datetime.now(datetime.UTC):
            return None
        return token

    def _git(
        self, method: str, path: str, query: str, headers: Any, body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self._root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": method,
            "CONTENT_TYPE": headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "HTTP_CONTENT_ENCODING": headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": headers.get("Git-Protocol", ""),
            "REMOTE_USER": TOKEN_USER,
            "REMOTE_ADDR": "127.0.0.1",
        }
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status, fields = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                fields.append((key, value.strip()))
        return status, fields, payload


def _handler(github: GitHubAppServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            with (github.workdir / "requests.log").open("a") as log:
                log.write(f"{self.command} {self.path.partition('?')[0]}\n")  # never a header: no token

        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, fields, payload = github.respond(self.command, self.path, self.headers, body)
            self.send_response(status)
            for key, value in fields:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _serve

    return Handler
