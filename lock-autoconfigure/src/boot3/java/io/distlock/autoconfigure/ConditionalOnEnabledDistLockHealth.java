package io.distlock.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;

/**
 * Matches when the {@code distlock} health indicator is enabled
 * ({@code management.health.distlock.enabled}, else {@code management.health.defaults.enabled}):
 * Spring Boot's condition, composed here because its package is the generation's.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Documented
@ConditionalOnEnabledHealthIndicator("distlock")
@interface ConditionalOnEnabledDistLockHealth {

}
