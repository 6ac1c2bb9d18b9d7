#!/usr/bin/env python3
"""The sign-in routes of the Microsoft Graph fixture (`onedrive_graph_server.py`), written from
the identity platform's documentation of the authorization code flow with PKCE and of the
device authorization grant. A mixin of its request handler. Python 3 standard library only.

  GET  /common/oauth2/v2.0/authorize    ?client_id&response_type=code&redirect_uri=http://localhost:PORT/
                                        &scope (offline_access Files.ReadWrite)&code_challenge
                                        &code_challenge_method=S256&state -> 302 to redirect_uri with
                                        code and state (the user approves at once), or with
                                        error=access_denied under --deny-authorization
  POST /common/oauth2/v2.0/devicecode   client_id&scope -> device_code, user_code, verification_uri,
                                        interval (--device-interval), expires_in, message
  POST /common/oauth2/v2.0/token        grant_type=authorization_code&code&code_verifier&redirect_uri
                                        &client_id&scope; grant_type=urn:ietf:params:oauth:grant-type:
                                        device_code&device_code&client_id: the first --device-slow-down
                                        polls answer slow_down, the next --device-pending
                                        authorization_pending, then the outcome (--device-outcome
                                        approve | decline: authorization_declined | expire: expired_token)
  POST /_control/device?outcome=O&pending=N   changes the outcome and pending polls of new device codes

A granted sign-in issues a refresh token ("fixture-issued-…") the token endpoint then accepts,
so Graph calls work with it. A code is good once, with its verifier and redirect_uri only.
"""
import base64
import hashlib
import secrets
import time
import urllib.parse

SCOPES = ("offline_access", "Files.ReadWrite")


class SignInRoutes:
    """The consent page, the device authorization endpoint and the two sign-in grants."""

    def scope_problem(self, scope):
        return None if all(s in (scope or "").split() for s in SCOPES) else \
            "AADSTS70011: The provided value for the input parameter 'scope' must name offline_access and Files.ReadWrite."

    def authorize(self, query):
        self.body_bytes()
        redirect = query.get("redirect_uri", "")
        # Microsoft: a public client's loopback redirect is http://localhost with any port.
        if urllib.parse.urlsplit(redirect).scheme != "http" or urllib.parse.urlsplit(redirect).hostname != "localhost":
            return self.send(400, f"AADSTS50011: The redirect URI '{redirect}' does not match the redirect URIs configured for the application.".encode(),
                             content_type="text/plain")
        problem = None
        if query.get("client_id") != self.server.client_id:
            problem = ("unauthorized_client", f"AADSTS700016: Application with identifier '{query.get('client_id')}' was not found.")
        elif query.get("response_type") != "code":
            problem = ("unsupported_response_type", "AADSTS700054: response_type must be code.")
        elif self.scope_problem(query.get("scope")):
            problem = ("invalid_scope", self.scope_problem(query.get("scope")))
        elif query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            problem = ("invalid_request", "AADSTS501491: code_challenge with code_challenge_method S256 is required.")
        elif self.server.deny_authorization:
            problem = ("access_denied", "AADSTS65004: User declined to consent to access the app.")
        answer = {"state": query["state"]} if "state" in query else {}
        if problem:
            answer.update({"error": problem[0], "error_description": problem[1]})
        else:
            code = "fixture-code-" + secrets.token_urlsafe(12)
            with self.server.counter_lock:
                self.server.codes[code] = (query["code_challenge"], redirect)
            answer["code"] = code
        self.send(302, b"", {"Location": redirect + ("&" if "?" in redirect else "?") + urllib.parse.urlencode(answer)})

    def device_code(self):
        form = dict(urllib.parse.parse_qsl(self.body_bytes().decode()))
        if form.get("client_id") != self.server.client_id:
            return self.send_json(400, {"error": "unauthorized_client",
                                        "error_description": f"AADSTS700016: Application with identifier '{form.get('client_id')}' was not found."})
        if self.scope_problem(form.get("scope")):
            return self.send_json(400, {"error": "invalid_scope", "error_description": self.scope_problem(form.get("scope"))})
        device = "fixture-device-" + secrets.token_urlsafe(16)
        user = secrets.token_hex(4).upper()
        with self.server.counter_lock:
            self.server.devices[device] = {"slow": self.server.device_slow_down, "pending": self.server.device_pending,
                                           "outcome": self.server.device_outcome}
        page = f"{self.base}/devicelogin"
        self.send_json(200, {"device_code": device, "user_code": user, "verification_uri": page,
                             "interval": self.server.device_interval, "expires_in": 900,
                             "message": f"To sign in, use a web browser to open the page {page} and enter the code {user} to authenticate."})

    def grant(self, form):
        """The token answer of the code and device code grants; None when it was refused."""
        if form.get("grant_type") == "authorization_code":
            if self.scope_problem(form.get("scope")):
                return self.send_json(400, {"error": "invalid_scope", "error_description": self.scope_problem(form.get("scope"))})
            with self.server.counter_lock:
                challenge, redirect = self.server.codes.pop(form.get("code"), (None, None))
            verifier = form.get("code_verifier", "")
            computed = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            if challenge is None:
                return self.send_json(400, {"error": "invalid_grant", "error_description": "AADSTS70008: The provided authorization code or refresh token has expired or was already used."})
            if computed != challenge:
                return self.send_json(400, {"error": "invalid_grant", "error_description": "AADSTS501481: The Code_Verifier does not match the code_challenge supplied in the authorization request."})
            if form.get("redirect_uri") != redirect:
                return self.send_json(400, {"error": "invalid_grant", "error_description": "AADSTS70001: redirect_uri does not match the one of the authorization request."})
            return self.issue()
        with self.server.counter_lock:
            device = self.server.devices.get(form.get("device_code"))
            if device is None:
                return self.send_json(400, {"error": "bad_verification_code", "error_description": "AADSTS70019: Verification code unknown."})
            if device["slow"] > 0:
                device["slow"] -= 1
                return self.send_json(400, {"error": "slow_down", "error_description": "AADSTS70016: Polling too fast."})
            if device["pending"] > 0:
                device["pending"] -= 1
                return self.send_json(400, {"error": "authorization_pending", "error_description": "AADSTS70016: OAuth 2.0 device flow error. Authorization is pending."})
            outcome = device["outcome"]
            del self.server.devices[form.get("device_code")]
        if outcome == "decline":
            return self.send_json(400, {"error": "authorization_declined", "error_description": "AADSTS70000: The user declined the sign-in."})
        if outcome == "expire":
            return self.send_json(400, {"error": "expired_token", "error_description": "AADSTS70020: The device code expired."})
        return self.issue()

    def issue(self):
        with self.server.counter_lock:
            access = secrets.token_urlsafe(24)
            self.server.tokens[access] = time.time() + self.server.lifetime
            refresh = "fixture-issued-" + secrets.token_urlsafe(12)
            self.server.refresh_tokens.add(refresh)
        self.send_json(200, {"token_type": "Bearer", "scope": "Files.ReadWrite", "expires_in": int(self.server.lifetime),
                             "access_token": access, "refresh_token": refresh})

    def device_control(self, query):
        with self.server.counter_lock:
            self.server.device_outcome = query.get("outcome", self.server.device_outcome)
            self.server.device_pending = int(query.get("pending", self.server.device_pending))
