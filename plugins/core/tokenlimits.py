"""``--service-account-max-token-expiration``: its bounds, checked at start-up."""

from marshmallow import ValidationError

#: kube-apiserver accepts a maximum between one hour and 2^32 seconds (0: none).
LOWEST, HIGHEST = 3600, 1 << 32


def validate_max_token_expiration(seconds: float) -> None:
    if seconds and not LOWEST <= seconds <= HIGHEST:
        raise ValidationError("the service-account-max-token-expiration must be between "
                              "1 hour and 2^32 seconds")
