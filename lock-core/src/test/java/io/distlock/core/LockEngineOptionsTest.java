package io.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Validation of {@link LockEngineOptions}.
 */
class LockEngineOptionsTest {

	@ParameterizedTest
	@ValueSource(strings = { "orders-service", "orders_7.eu-west", "3f2b9c1e-8d4a-4c55-9a51-0e6f1d2c7b84", "bestellungen-ü" })
	void clientIdOfVisibleCharactersWithoutColonIsAccepted(String clientId) {
		assertThat(LockEngineOptions.builder().clientId(clientId).build().clientId()).isEqualTo(clientId);
	}

	@ParameterizedTest
	@ValueSource(strings = { "orders service", "orders\tservice", "orders\nservice", "orders\u00a0service",
			"orders\u0000service", "orders\u007fservice", "orders:service", " ", "" })
	void clientIdThatWouldBreakOwnerIdsOrHandOffMessagesIsRejectedNamingTheValue(String clientId) {
		assertThatIllegalArgumentException().isThrownBy(() -> LockEngineOptions.builder().clientId(clientId).build())
			.withMessageContaining("clientId must be non-empty and contain no ':', whitespace or control characters")
			.withMessageContaining("but was '" + clientId + "'");
	}

	@ParameterizedTest
	@ValueSource(strings = { "orders service", "orders\u00a0service" })
	void rejectionPointsAtTheInvisibleCharacter(String clientId) {
		assertThatIllegalArgumentException().isThrownBy(() -> LockEngineOptions.builder().clientId(clientId).build())
			.withMessageEndingWith(String.format("(U+%04X at index 6)", (int) clientId.charAt(6)));
	}

}
