"""TLS and the address rule: a non-loopback address without a certificate is refused at start
(exit 64, one line); with a certificate and key the front serves HTTPS; `insecure = yes` serves
plain HTTP on a non-loopback address with one warning."""

import http.client
import os
import ssl
import sys
import tempfile
import shutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import front  # noqa: E402

EXIT_S = 30


class TLSTests(front.FrontTestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="hrmd-tls-")
        self.addCleanup(shutil.rmtree, self.directory, True)

    def https_get(self, port, path, token, certificate):
        connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=front.CALL_TIMEOUT_S, context=front.tls_context(certificate))
        try:
            connection.request("GET", path, headers={"Authorization": "Bearer " + token} if token else {})
            response = connection.getresponse()
            return front.Answer(response.status, response.getheaders(), response.read())
        finally:
            connection.close()

    def test_non_loopback_without_certificate_is_refused(self):
        hrmd = front.Hrmd(self, http="0.0.0.0:0", wait=False)
        status = hrmd.wait_exit(EXIT_S)
        self.assertEqual(status, 64, hrmd.output())
        hrmd.log.join(EXIT_S)
        lines = [line for line in hrmd.output().splitlines() if line.strip()]
        refusals = [line for line in lines if "loopback" in line]
        self.assertEqual(len(refusals), 1, lines)
        self.assertIn("certificate", refusals[0])
        self.assertEqual(lines[-1], refusals[0], "the refusal is not the last line: %r" % lines)
        self.assertFalse([line for line in lines[:-1] if " info " not in line], "more than the refusal and start-up lines: %r" % lines)

    def test_half_a_tls_configuration_is_refused(self):
        certificate, _ = front.make_certificate(self.directory)
        hrmd = front.Hrmd(self, config="[http]\ncertificate = %s\n" % certificate, wait=False)
        self.assertEqual(hrmd.wait_exit(EXIT_S), 64, hrmd.output())

    def test_serves_https_with_a_certificate(self):
        certificate, key = front.make_certificate(self.directory)
        for address in ("127.0.0.1:0", "0.0.0.0:0"):
            with self.subTest(address=address):
                hrmd = front.Hrmd(self, http=address, config="[http]\ncertificate = %s\nkey = %s\n" % (certificate, key))
                self.assertEqual(hrmd.scheme, "https", hrmd.output())
                token, _ = hrmd.token("mary/tls")
                answer = self.https_get(hrmd.port, "/api/v1/whoami", token, certificate)
                self.assertEqual(answer.status, 200, answer)
                self.assertEqual(answer.json["source"], "mary/tls")
                self.assertEqual(self.https_get(hrmd.port, "/api/v1/whoami", None, certificate).status, 401)
                # A client that does not trust the certificate is refused by its own TLS.
                untrusting = http.client.HTTPSConnection("127.0.0.1", hrmd.port, timeout=front.CALL_TIMEOUT_S,
                                                         context=ssl.create_default_context())
                with self.assertRaises(ssl.SSLError):
                    untrusting.request("GET", "/api/v1/whoami")
                untrusting.close()
                # Plain HTTP on the TLS port gets no answer.
                with self.assertRaises((OSError, http.client.HTTPException)):
                    plain = http.client.HTTPConnection("127.0.0.1", hrmd.port, timeout=5)
                    plain.request("GET", "/api/v1/whoami")
                    response = plain.getresponse()
                    if response.status:
                        raise OSError("answered")
                self.assertTrue(hrmd.alive())
                self.assertNotIn("warning", hrmd.output().lower().replace("insecure = yes", ""))
                hrmd.stop()

    def test_insecure_warns_once(self):
        hrmd = front.Hrmd(self, http="0.0.0.0:0", config="[http]\ninsecure = yes\n")
        self.assertEqual(hrmd.scheme, "http")
        token, _ = hrmd.token("mary/insecure")
        self.assertEqual(hrmd.get("/api/v1/whoami", token).status, 200)
        warnings = [line for line in hrmd.output().splitlines() if "plain HTTP" in line]
        self.assertEqual(len(warnings), 1, hrmd.output())
        self.assertIn("warning", warnings[0])
        self.assertNotIn(token, hrmd.output())
