package io.distlock.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;

/**
 * Imports Spring Boot's auto-configuration of Spring Data Redis, which an annotation can name only by
 * its class, in the package of the generation; it adds to any other {@code @ImportAutoConfiguration}
 * on the same class.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Documented
@ImportAutoConfiguration(RedisAutoConfiguration.class)
public @interface ImportDataRedisAutoConfiguration {

}
